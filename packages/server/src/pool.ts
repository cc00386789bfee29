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
  wallClock,
} from '@ids/engine';
import { setLongTimeout, sleep } from '@ids/engine/internal';
import { HttpError } from './errors.js';
import type { ServerEvent } from './events.js';
import { type ServerMetrics, zeroSlot } from './metrics.js';
import type { MachineIdSourceContext, MachineIdSourceDefinition } from './sources.js';

/** What the pool is built from. */
export interface PoolOptions {
  /** The layout every generator uses. */
  readonly layout: Layout;
  /** How many generators (machine IDs): 1 or more. */
  readonly count: number;
  /** Where the machine IDs come from. */
  readonly source: MachineIdSourceDefinition;
  /** What the source is told besides the layout and the index. */
  readonly context: Omit<MachineIdSourceContext, 'layout' | 'index' | 'count' | 'shared'>;
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
  /** How its machine ID was chosen. */
  readonly how: string;
}

class Slot implements PoolSlot {
  state: SlotState = 'held';
  pending = 0;
  generator!: IdGenerator;
  how = '';
  /** Its `ids_issued_total` child, looked up once (prom-client's labels() hashes on every call). */
  issued!: { inc(value: number): void };
  constructor(readonly index: number) {}
}

/**
 * The longest time unit whose waits end in a setImmediate poll, as the engine's own clock does:
 * a timer oversleeps by about a millisecond, which skips a whole 1 ms tick but costs a 10 ms tick
 * nothing, while polling the last 1.5 ms of every wait spins the CPU the requests need (at the
 * ceiling of a Sonyflake, 15% of a core).
 */
const POLL_TAIL_UP_TO_UNIT_MS = 2;

/** Counts a generator's waits through its clock: the engine sleeps only to wait for time to pass. */
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
    ...(base.sleepSync ? { sleepSync: base.sleepSync.bind(base) } : {}),
  };
}

/** The generators of one server. */
export class MachinePool {
  /** The layout of every generator. */
  readonly layout: Layout;
  readonly #slots: Slot[];
  readonly #options: PoolOptions;
  readonly #shared = new Map<string, unknown>();
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
        slot.issued = options.metrics.issued.labels(label);
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
   * @throws HttpError 503 `ERR_NOT_READY` when no generator holds its machine ID; the
   * generator's errors (ClockMovedBackwardsError, MachineIdLostError, ...) as they are.
   */
  async issue(count: number): Promise<bigint[]> {
    const slot = this.#pick();
    slot.pending += count;
    try {
      const ids = count === 1 ? [await slot.generator.nextId()] : await slot.generator.nextIds(count);
      slot.issued.inc(count);
      return ids;
    } catch (error) {
      if (error instanceof ClockMovedBackwardsError) {
        this.#options.metrics.clockBackwards.labels(String(slot.index)).inc();
      }
      throw error;
    } finally {
      slot.pending -= count;
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
    await this.#options.source.close?.(this.#shared);
  }

  #acquire(index: number) {
    return this.#options.source.acquire({
      ...this.#options.context,
      layout: this.layout,
      index,
      count: this.#slots.length,
      shared: this.#shared,
    });
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
          await next.release();
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
        return isClaim(got.machineId) ? got.machineId : { machineId: got.machineId, release() {} };
      } catch (error) {
        this.#options.onError(error);
        await new Promise<void>((resolve) => setLongTimeout(resolve, delayMs, { unref: true }));
        delayMs = Math.min(delayMs * 2, 5000);
      }
    }
  }
}
