import { type Clock, IdsError, InvalidArgumentError, MAX_ID, StoreUnavailableError } from '@ids/engine';
import { checkInteger, clockOption, errorText, received } from '@ids/engine/internal';
import {
  BufferEmptyError,
  SegmentsClosedError,
  StoreCorruptError,
  StoreWentBackwardsError,
} from './errors.js';
import {
  checkNumber,
  checkStep,
  DEFAULT_MAX_STEP,
  DEFAULT_TARGET_MS,
  nextStep,
  STEP_LIMIT,
  type StepRule,
} from './step.js';
import { checkTag, type SegmentRange, type SegmentStore } from './store.js';

/** The default first step: IDs per segment until the dynamic step changes it. */
export const DEFAULT_STEP = 1000;
/** The default share of a segment used before the next one is fetched (Leaf: 10%). */
export const DEFAULT_PREFETCH_AT = 0.1;
/** The most IDs one `nextIds` call returns. */
export const MAX_IDS_PER_CALL = 1_000_000;

/** How `Segments.create` takes its store, tag and settings. */
export interface SegmentsOptions {
  /** Where segments come from (`pgliteStore`, `postgresStore`, `redisStore`, ...). Required. */
  readonly store: SegmentStore;
  /** The sequence to draw from: 1 to 64 of A-Z a-z 0-9 _ . - (else InvalidTagError). Required. */
  readonly tag: string;
  /** The first step (IDs per segment). Default 1000; from minStep to maxStep, else StepOutOfRangeError. */
  readonly step?: number;
  /** The smallest step the dynamic rule shrinks to. Default `step`; from 1 to `step`. */
  readonly minStep?: number;
  /** The largest step the dynamic rule grows to. Default 1,000,000 (Leaf); from `step` to 2^31 - 1. Equal to minStep: a fixed step. */
  readonly maxStep?: number;
  /** How long a segment should last, in ms (see `nextStep`). Default 15 minutes (Leaf); more than 0. */
  readonly targetMs?: number;
  /** The share of a segment used before the next is fetched. Default 0.1; from 0 to 0.99 (else InvalidArgumentError). */
  readonly prefetchAt?: number;
  /**
   * Read only to time how long segments last, for the dynamic step: IDs never depend on it, so
   * clock steps change nothing but the step. Default: the wall clock.
   */
  readonly clock?: Clock;
}

/**
 * `createTag` was an option here once; it ran on every start, so a store that had forgotten the
 * tag (Redis without persistence) started it again at 1. It is refused, never ignored.
 * @throws InvalidArgumentError when options hold `createTag`.
 */
export function refuseCreateTag(options: object): void {
  if ('createTag' in options) {
    throw new InvalidArgumentError(
      `createTag: expected no such option (received ${received((options as { createTag?: unknown }).createTag)}): a tag is created once, apart from starting, with store.createTag(tag, { after }) or ids segment create-tag`,
    );
  }
}

/** What a Segments has done: for tests, metrics and benchmarks. */
export interface SegmentsStats {
  /** The step the next fetch will ask for (before the dynamic rule adjusts it). */
  readonly step: number;
  /** Store calls made for segments so far (each one round trip). */
  readonly roundTrips: number;
  /** Times the current segment was used up and another took its place (the first one is not counted). */
  readonly switches: number;
  /** IDs held and not yet issued: the rest of the current segment plus the fetched next one. */
  readonly remaining: bigint;
  /** The highest ID the store has handed this process (issued or held), 0n before the first. */
  readonly highest: bigint;
}

/**
 * A store's failure as this package's errors: its own pass, anything else is the store not
 * answering. The built-in stores type their failures already; this is for a store of the
 * user's, named by its `kind`.
 */
function typed(error: unknown, tag: string, store: string): Error {
  if (error instanceof IdsError) return error;
  const reason = errorText(error);
  return new StoreUnavailableError(
    store,
    'segment',
    `tag ${JSON.stringify(tag)}: both buffers are empty and the store gave no segment: ${reason}`,
    { cause: error },
  );
}

/**
 * Leaf-segment IDs for one tag: ranges taken from a store and handed out from memory, the next
 * range fetched in the background once `prefetchAt` of the current one is used (Leaf's double
 * buffer). IDs are bigint, from 1, strictly increasing within the process and unique across
 * every process that shares the store. The clock is never read for an ID.
 *
 * ```
 *   current [first ........ used | ........ last]   next [first ........ last]
 *                          ^ prefetchAt: fetch next   ^ ready before current runs out
 * ```
 */
export class Segments {
  readonly #store: SegmentStore;
  readonly #tag: string;
  readonly #rule: StepRule;
  readonly #prefetchAt: number;
  readonly #clock: Clock;
  #step: number;
  // The current segment: `#cur` is the next ID to issue, empty once it passes `#last`.
  #cur = 1n;
  #last = 0n;
  #triggerAt = 0n;
  #size = 0n;
  #next: SegmentRange | undefined;
  #pending: Promise<void> | undefined;
  #lastFetchAt: number | undefined;
  #highest = 0n;
  #roundTrips = 0;
  #adopted = 0;
  #closed = false;

  private constructor(options: SegmentsOptions) {
    this.#store = options.store;
    this.#tag = options.tag;
    const step = options.step ?? DEFAULT_STEP;
    checkStep(step, 'step', 1, STEP_LIMIT);
    const minStep = checkStep(options.minStep ?? step, 'minStep', 1, step);
    const maxStep = checkStep(
      options.maxStep ?? Math.max(step, DEFAULT_MAX_STEP),
      'maxStep',
      step,
      STEP_LIMIT,
    );
    const targetMs = checkNumber(
      options.targetMs ?? DEFAULT_TARGET_MS,
      'targetMs',
      Number.MIN_VALUE,
      2 ** 40,
    );
    this.#rule = { minStep, maxStep, targetMs };
    this.#step = step;
    this.#prefetchAt = checkNumber(options.prefetchAt ?? DEFAULT_PREFETCH_AT, 'prefetchAt', 0, 0.99);
    this.#clock = clockOption(options.clock);
  }

  /**
   * Checks the settings and fetches the first segment, so that the first `nextId()` is served from
   * memory. The tag must exist: it is created once, apart (`store.createTag`), never here.
   *
   * @throws InvalidTagError, StepOutOfRangeError, InvalidArgumentError for bad settings;
   * UnknownTagError for a tag the store lacks; StoreCorruptError for a
   * store value no segment can be cut from; StoreUnavailableError when the store cannot answer.
   */
  static async create(options: SegmentsOptions): Promise<Segments> {
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError(`Segments.create: expected options, received ${received(options)}`);
    }
    const store = options.store as Partial<SegmentStore> | undefined;
    if (typeof store?.allocate !== 'function' || typeof store.createTag !== 'function') {
      throw new InvalidArgumentError(
        `store: expected a SegmentStore (allocate, createTag, close), received ${received(store)}`,
      );
    }
    checkTag(options.tag);
    refuseCreateTag(options);
    const segments = new Segments(options);
    await segments.#refill();
    return segments;
  }

  /** The tag these IDs are drawn from. */
  get tag(): string {
    return this.#tag;
  }

  /** Counters and the current step (see SegmentsStats). */
  get stats(): SegmentsStats {
    const current = this.#cur > this.#last ? 0n : this.#last - this.#cur + 1n;
    const next = this.#next ? this.#next.last - this.#next.first + 1n : 0n;
    return {
      step: this.#step,
      roundTrips: this.#roundTrips,
      switches: Math.max(0, this.#adopted - 1),
      remaining: current + next,
      highest: this.#highest,
    };
  }

  /**
   * The next ID. Served from memory; waits on the store only when both buffers are empty (a
   * store slower than a segment lasts: callers wait for the fetch in flight, never for a second).
   *
   * @throws (rejects) StoreUnavailableError once both buffers are empty and the store cannot
   * answer; UnknownTagError, StoreCorruptError or StoreWentBackwardsError for what the store
   * answered; SegmentsClosedError after close().
   */
  nextId(): Promise<bigint> {
    if (this.#closed) return Promise.reject(this.#closedError());
    const id = this.#take();
    return id === undefined ? this.#nextSlow() : Promise.resolve(id);
  }

  #closedError(): SegmentsClosedError {
    return new SegmentsClosedError(`tag ${JSON.stringify(this.#tag)}: closed`);
  }

  async #nextSlow(): Promise<bigint> {
    for (;;) {
      await this.#refill();
      const id = this.#take();
      if (id !== undefined) return id;
    }
  }

  /**
   * The next ID, from memory only: it never waits on the store.
   * @throws BufferEmptyError when both buffers are empty (a fetch is started for a later call);
   * SegmentsClosedError after close().
   */
  nextIdSync(): bigint {
    const id = this.#take();
    if (id !== undefined) return id;
    this.#fetch().catch(() => undefined);
    throw new BufferEmptyError(
      `tag ${JSON.stringify(this.#tag)}: both buffers are empty; a segment is being fetched. Use nextId() to wait for it`,
    );
  }

  /**
   * The next `count` IDs, in increasing order.
   * @throws (rejects) InvalidArgumentError unless `count` is an integer from 1 to 1,000,000;
   * otherwise what `nextId()` rejects with (IDs taken before the failure are not returned, and not reissued).
   */
  async nextIds(count: number): Promise<bigint[]> {
    checkInteger(count, 'count', 1, MAX_IDS_PER_CALL);
    const ids = new Array<bigint>(count);
    for (let i = 0; i < count; ) {
      const id = this.#take();
      if (id === undefined) await this.#refill();
      else ids[i++] = id;
    }
    return ids;
  }

  /** Stops issuing IDs (calls then fail with SegmentsClosedError) and waits for a fetch in flight. The store stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pending?.catch(() => undefined);
  }

  #take(): bigint | undefined {
    if (this.#closed) throw this.#closedError();
    if (this.#cur > this.#last) {
      if (this.#next === undefined) return undefined;
      this.#adopt(this.#next);
      this.#next = undefined;
    }
    const id = this.#cur++;
    if (id >= this.#triggerAt && this.#next === undefined && this.#pending === undefined) {
      this.#fetch().catch(() => {
        // A failed prefetch is tried again after another `prefetchAt` of the segment is used;
        // only a caller that finds both buffers empty sees the error.
        this.#triggerAt = this.#cur + this.#prefetchDistance();
      });
    }
    return id;
  }

  #prefetchDistance(): bigint {
    const d = BigInt(Math.floor(Number(this.#size) * this.#prefetchAt));
    return d > 0n ? d : 1n;
  }

  #adopt(range: SegmentRange): void {
    this.#adopted += 1;
    this.#cur = range.first;
    this.#last = range.last;
    this.#size = range.last - range.first + 1n;
    this.#triggerAt = range.first + BigInt(Math.floor(Number(this.#size) * this.#prefetchAt));
  }

  /** Waits for a segment when both buffers are empty: the fetch in flight, else a new one. */
  async #refill(): Promise<void> {
    try {
      await this.#fetch();
    } catch (error) {
      throw typed(error, this.#tag, this.#store.kind);
    }
  }

  #fetch(): Promise<void> {
    if (this.#closed)
      return Promise.reject(new SegmentsClosedError(`tag ${JSON.stringify(this.#tag)}: closed`));
    if (this.#pending) return this.#pending;
    const now = this.#clock.now();
    const step = nextStep(
      this.#step,
      this.#lastFetchAt === undefined ? undefined : now - this.#lastFetchAt,
      this.#rule,
    );
    this.#roundTrips += 1;
    const pending = (async () => {
      try {
        const range = await this.#store.allocate(this.#tag, step);
        this.#accept(range);
        this.#step = step;
        this.#lastFetchAt = now;
      } finally {
        this.#pending = undefined;
      }
    })();
    this.#pending = pending;
    return pending;
  }

  /** A range is taken only if it is sound and lies wholly above every ID this process issued. */
  #accept(range: SegmentRange): void {
    const where = `tag ${JSON.stringify(this.#tag)} (${this.#store.kind})`;
    const { first, last } = range ?? {};
    if (
      typeof first !== 'bigint' ||
      typeof last !== 'bigint' ||
      first < 1n ||
      last < first ||
      last > MAX_ID
    ) {
      throw new StoreCorruptError(
        `${where}: expected a range of IDs from 1 to ${MAX_ID}, the store answered ${received(first)} to ${received(last)}`,
      );
    }
    if (first <= this.#highest) {
      throw new StoreWentBackwardsError(
        `${where}: the store handed out ${first} to ${last}, but this process already holds IDs up to ${this.#highest}; refused (restored or reset store?)`,
      );
    }
    this.#highest = last;
    if (this.#cur > this.#last) this.#adopt(range);
    else this.#next = range;
  }
}
