// Several generators in one process, each under its own machine ID: the way past one machine
// ID's ceiling (25,600 IDs/s for Sonyflake). A request is served by one generator, the one
// with the fewest IDs pending, so a batch's IDs are increasing; IDs of different generators
// differ in their machine field, so they never collide, but they are not ordered across
// generators (see the README).
import {
  type Clock,
  ClockMovedBackwardsError,
  checkGeneratorOptions,
  IdGenerator,
  isClaim,
  type Layout,
  type MachineIdClaim,
  type MachineIdProvider,
  wallClock,
} from '@ids/engine';
import { idOf, releaseQuietly, setLongTimeout, sleep } from '@ids/engine/internal';
import { HttpError } from './errors.js';
import type { ServerEvent } from './events.js';
import { type ServerMetrics, zeroSlot } from './metrics.js';

/** What the pool is built from. */
export interface PoolOptions {
  /** The layout every generator uses. */
  readonly layout: Layout;
  /** How many generators (machine IDs): 1 or more. */
  readonly count: number;
  /** Where the machine IDs come from: the provider of each generator, by its index (see sources.ts). */
  readonly providers: (index: number) => MachineIdProvider;
  /** The metrics to update. */
  readonly metrics: ServerMetrics;
  /** The generators' clock (tests inject a FakeClock). Default: the engine's wall clock. */
  readonly clock?: Clock;
  /** The generators' `maxClockBackwardMs`. Default: the engine's (1000). */
  readonly maxClockBackwardMs?: number;
  /** Receives background errors (recording, renewing). */
  readonly onError: (error: unknown) => void;
  /**
   * Receives a claim's loss and its recovery. Without it, a loss's reason goes to `onError` and
   * a recovery is not reported.
   */
  readonly onEvent?: (event: ServerEvent) => void;
}

/** The state of one generator's machine ID. */
export type SlotState = 'held' | 'fenced' | 'closed';

/** One generator of the pool. */
export interface PoolSlot {
  /** Its place in the pool, from 0. */
  readonly index: number;
  /** The generator. */
  readonly generator: IdGenerator;
  /** `held`: issuing; `fenced`: its claim was lost and it waits for a new one; `closed`. */
  readonly state: SlotState;
  /** How its machine ID was chosen: a sentence (from the `auto` chain, followed by its trail as numbered lines). */
  readonly how: string;
  /** The `auto` chain's trail as data (each step tried, what it did and why); empty from another source. */
  readonly trail: readonly MachineIdTrailEntry[];
}

/** One step of the `auto` chain's trail, as the chain notes it. */
export interface MachineIdTrailEntry {
  /** The step's name (`--machine-id`, `private-ip`, `host-claim`, ...). */
  readonly step: string;
  /** `used`, `skipped` or `failed`. */
  readonly outcome: string;
  /** Why, in a sentence. */
  readonly detail: string;
}

class Slot implements PoolSlot {
  state: SlotState = 'held';
  pending = 0;
  generator!: IdGenerator;
  how = '';
  trail: readonly MachineIdTrailEntry[] = [];
  constructor(readonly index: number) {}
}

/**
 * The longest time unit whose waits end in a setImmediate poll, as the engine's own clock does:
 * a timer oversleeps by about a millisecond, which skips a whole 1 ms tick but costs a 10 ms tick
 * nothing, while polling the last 1.5 ms of every wait spins the CPU the requests need (at the
 * ceiling of a Sonyflake, 15% of a core).
 */
const POLL_TAIL_UP_TO_UNIT_MS = 2;

/**
 * How many IDs a batch with a signal takes between two looks at it: 16 ticks of Sonyflake
 * (160 ms), one ms of a Twitter layout. Small enough to stop well within a lock's lease, large
 * enough that a batch of 100,000 is 25 turns of the queue.
 */
const ISSUE_CHUNK = 4096;

/**
 * What the generators' `sleepSync` throws: the server's thread never blocks. `issueOne` tries
 * `nextIdSync()` first, which sleeps only when the tick is used up (and takes no slot before it
 * would sleep); this makes it give way to `nextId()`, which waits with a timer. It never leaves
 * the pool.
 */
const MUST_WAIT: unique symbol = Symbol('the generator must wait for its next tick');

/**
 * Counts a generator's waits through its clock: the engine sleeps only to wait for time to pass.
 * Its `sleepSync` refuses (see MUST_WAIT), so only the async waits are counted, each once.
 */
function measuredClock(base: Clock, layout: Layout, label: string, metrics: ServerMetrics): Clock {
  const baseSleep = base.sleep
    ? base.sleep.bind(base)
    : layout.timeUnitMs <= POLL_TAIL_UP_TO_UNIT_MS
      ? sleep
      : (ms: number) => sleep(ms, 0);
  const waits = metrics.waits.labels(label);
  const seconds = metrics.waitSeconds.labels(label);
  const backwards = metrics.clockBackwards.labels(label);
  return {
    now: () => base.now(),
    async sleep(ms: number) {
      waits.inc();
      // Longer than a tick: the clock is behind the last tick used.
      if (ms > layout.timeUnitMs) backwards.inc();
      const t0 = performance.now();
      await baseSleep(ms);
      seconds.observe((performance.now() - t0) / 1000);
    },
    sleepSync() {
      throw MUST_WAIT;
    },
  };
}

/** The generators of one server. */
export class MachinePool {
  /** The layout of every generator. */
  readonly layout: Layout;
  readonly #slots: Slot[];
  readonly #options: PoolOptions;
  #closing = false;
  #next = 0;

  private constructor(options: PoolOptions) {
    this.layout = options.layout;
    this.#options = options;
    this.#slots = Array.from({ length: options.count }, (_, i) => new Slot(i));
  }

  /**
   * Takes `count` machine IDs from the source and builds a generator for each.
   * @throws what the source throws; every claim taken so far is released first.
   */
  static async open(options: PoolOptions): Promise<MachinePool> {
    const pool = new MachinePool(options);
    try {
      for (const slot of pool.#slots) {
        const got = await pool.#acquire(slot.index);
        slot.how = got.how;
        slot.trail = got.trail;
        const label = String(slot.index);
        slot.generator = new IdGenerator(
          checkGeneratorOptions({
            layout: options.layout,
            machineId: pool.#watch(got.machineId, slot),
            clock: measuredClock(options.clock ?? wallClock, options.layout, label, options.metrics),
            ...(options.maxClockBackwardMs !== undefined
              ? { maxClockBackwardMs: options.maxClockBackwardMs }
              : {}),
            onError: options.onError,
          }),
        );
        zeroSlot(options.metrics, label);
        options.metrics.claimHeld.labels(label).set(1);
        options.metrics.machineId.labels(label).set(slot.generator.machine);
      }
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  /** The generators, in slot order. */
  get slots(): readonly PoolSlot[] {
    return this.#slots;
  }

  /** Whether every generator holds its machine ID and the pool is not closing. */
  get ready(): boolean {
    return !this.#closing && this.#slots.every((slot) => slot.state === 'held');
  }

  /** Whether `close()` was called. */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * `count` IDs from one generator, increasing: the held generator with the fewest IDs pending
   * (round robin among equals).
   * With `signal`, the batch is taken in chunks of ISSUE_CHUNK and stops between two when it
   * aborts, rejecting with its reason: an Idempotency-Key's batch whose lock was lost would
   * otherwise go on taking up to 100,000 IDs that will never be answered.
   * @throws HttpError 503 `ERR_NOT_READY` when no generator holds its machine ID; the
   * generator's errors (ClockMovedBackwardsError, MachineIdLostError, ...) as they are; the
   * signal's reason.
   */
  async issue(count: number, signal?: AbortSignal): Promise<bigint[]> {
    signal?.throwIfAborted();
    const slot = this.#pick();
    if (count === 1) return [await this.#waitFor(slot, 1)];
    if (!signal || count <= ISSUE_CHUNK) return this.#waitFor(slot, count);
    // One generator throughout, so the chunks follow each other and the batch stays increasing;
    // other requests may take IDs between two chunks.
    const ids: bigint[] = [];
    for (let left = count; left > 0; left -= ISSUE_CHUNK) {
      for (const id of await this.#waitFor(slot, Math.min(left, ISSUE_CHUNK))) ids.push(id);
      if (left > ISSUE_CHUNK) signal.throwIfAborted();
    }
    return ids;
  }

  /**
   * One ID, as `issue(1)` gives it, but returned as it is when the generator can issue it now:
   * no promise, so `GET /id` is answered in the request's own turn. A promise when it must wait
   * for its next tick, or when other requests of its generator are waiting (they come first).
   * @throws as `issue` rejects.
   */
  issueOne(): bigint | Promise<bigint> {
    const slot = this.#pick();
    if (slot.pending > 0) return this.#waitFor(slot, 1);
    let id: bigint;
    try {
      id = slot.generator.nextIdSync();
    } catch (error) {
      if (error === MUST_WAIT) return this.#waitFor(slot, 1);
      this.#failed(slot, error);
      throw error;
    }
    this.#options.metrics.issued.add(slot.index, 1);
    return id;
  }

  /** `count` IDs of `slot` through the generator's queue, waiting for their ticks. */
  #waitFor(slot: Slot, count: 1): Promise<bigint>;
  #waitFor(slot: Slot, count: number): Promise<bigint[]>;
  async #waitFor(slot: Slot, count: number): Promise<bigint | bigint[]> {
    slot.pending += count;
    try {
      const ids = count === 1 ? await slot.generator.nextId() : await slot.generator.nextIds(count);
      this.#options.metrics.issued.add(slot.index, count);
      return ids;
    } catch (error) {
      this.#failed(slot, error);
      throw error;
    } finally {
      slot.pending -= count;
    }
  }

  #failed(slot: Slot, error: unknown): void {
    if (error instanceof ClockMovedBackwardsError) {
      this.#options.metrics.clockBackwards.labels(String(slot.index)).inc();
    }
  }

  #pick(): Slot {
    const slots = this.#slots;
    const n = slots.length;
    let best: Slot | undefined;
    for (let k = 0; k < n; k++) {
      const slot = slots[(this.#next + k) % n] as Slot;
      if (slot.state !== 'held') continue;
      if (best === undefined || slot.pending < best.pending) best = slot;
      if (best.pending === 0) break;
    }
    if (!best) {
      throw new HttpError(
        503,
        this.#closing ? 'ERR_SHUTTING_DOWN' : 'ERR_NOT_READY',
        this.#closing
          ? 'the server is shutting down; retry on another instance'
          : 'no generator holds its machine ID right now (every claim is fenced); retry shortly',
        { 'retry-after': '1' },
      );
    }
    this.#next = (best.index + 1) % n;
    return best;
  }

  /**
   * Stops every generator: each records the time it reached and releases its claim. A renewal
   * under way stops trying. Safe to call more than once.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#options.metrics.ready.set(0);
    await Promise.all(
      this.#slots.map(async (slot) => {
        if (slot.state === 'closed') return;
        slot.state = 'closed';
        this.#options.metrics.claimHeld.labels(String(slot.index)).set(0);
        await slot.generator?.close();
      }),
    );
  }

  /** One machine ID from a generator's provider, and how it was chosen (what the provider noted: the `auto` chain notes its trail). */
  async #acquire(
    index: number,
  ): Promise<{ machineId: number | MachineIdClaim; how: string; trail: readonly MachineIdTrailEntry[] }> {
    let how: string | undefined;
    let trail: readonly MachineIdTrailEntry[] = [];
    const machineId = await this.#options.providers(index)({
      bits: this.layout.machineBits,
      note: (detail, steps) => {
        how = detail;
        trail = steps ?? [];
      },
    });
    return { machineId, how: how ?? `machine ID ${idOf(machineId)}`, trail };
  }

  /**
   * The claim as the generator sees it: the same, plus a `renew` that takes the machine ID again
   * from the source when the claim cannot renew itself (a host claim whose file was taken), and
   * the slot's state kept in step with the claim's.
   */
  #watch(source: number | MachineIdClaim, slot: Slot): number | MachineIdClaim {
    if (!isClaim(source)) return source;
    const claim = source;
    const label = String(slot.index);
    const metrics = this.#options.metrics;
    const { onEvent, onError } = this.#options;
    const fence = () => {
      if (slot.state !== 'held') return;
      // Said once here: the generator refuses IDs from now on, and readiness goes false.
      const reason = claim.signal?.reason ?? new Error(`slot ${slot.index}: claim lost`);
      if (onEvent) onEvent({ kind: 'claim-lost', slot: slot.index, machineId: claim.machineId, reason });
      else onError(reason);
      slot.state = 'fenced';
      metrics.fences.labels(label).inc();
      metrics.claimHeld.labels(label).set(0);
    };
    if (claim.signal?.aborted) fence();
    else claim.signal?.addEventListener('abort', fence, { once: true });
    const watched: MachineIdClaim = {
      machineId: claim.machineId,
      ...(claim.signal ? { signal: claim.signal } : {}),
      ...(claim.notBefore !== undefined ? { notBefore: claim.notBefore } : {}),
      ...(claim.recordIntervalMs !== undefined ? { recordIntervalMs: claim.recordIntervalMs } : {}),
      ...(claim.record ? { record: (timeMs: number) => claim.record?.(timeMs) } : {}),
      ...(claim.verify ? { verify: () => claim.verify?.() } : {}),
      release: () => claim.release(),
      renew: async () => {
        const next = claim.renew ? await claim.renew() : await this.#reacquire(slot);
        if (this.#closing) {
          // Closing: the new claim is not kept, and a release that fails is only reported (a
          // rejection here would have the claim watch try to renew again).
          await releaseQuietly(next, onError);
          return new Promise<never>(() => undefined);
        }
        const renewed = this.#watch(next, slot) as MachineIdClaim;
        slot.state = 'held';
        metrics.renewals.labels(label).inc();
        metrics.claimHeld.labels(label).set(1);
        metrics.machineId.labels(label).set(next.machineId);
        onEvent?.({
          kind: 'claim-recovered',
          slot: slot.index,
          machineId: next.machineId,
          previousMachineId: claim.machineId,
        });
        return renewed;
      },
    };
    return watched;
  }

  /** Takes a machine ID again from the source, retrying with backoff until one is had or the pool closes. */
  async #reacquire(slot: Slot): Promise<MachineIdClaim> {
    let delayMs = 50;
    for (;;) {
      // Closing: never settles, so the fenced generator stays fenced until it is closed.
      if (this.#closing) return new Promise<never>(() => undefined);
      try {
        const got = await this.#acquire(slot.index);
        slot.how = got.how;
        slot.trail = got.trail;
        return isClaim(got.machineId) ? got.machineId : { machineId: got.machineId, release() {} };
      } catch (error) {
        this.#options.onError(error);
        await new Promise<void>((resolve) => setLongTimeout(resolve, delayMs, { unref: true }));
        delayMs = Math.min(delayMs * 2, 5000);
      }
    }
  }
}
