import { type Clock, checkClock, sleep, sleepSync, wallClock } from './clock.js';
import {
  ClockMovedBackwardsError,
  ClockStalledError,
  GeneratorClosedError,
  InvalidArgumentError,
  MachineIdLostError,
  received,
} from './errors.js';
import { checkMachineId, compose, type DecomposedId, decompose, type IdInput, toTime } from './id.js';
import { type Layout, tickStartMs } from './layout.js';
import { idOf, isClaim, type MachineIdClaim } from './machine.js';
import { enterLive, type SameMachineIdSetting, shareOf } from './registry.js';
import { advance, type GeneratorState, initialState, type Slot } from './state.js';
import type { GeneratorView } from './view.js';

/** Default for `maxClockBackwardMs`: NTP corrections are usually well under a second. */
export const DEFAULT_MAX_CLOCK_BACKWARD_MS = 1000;
/** Default for a claim's `recordIntervalMs`. */
export const DEFAULT_RECORD_INTERVAL_MS = 1000;
/** Sequences up to this many values get a precomputed table of low bits (16 Ki BigInts, about 0.5 MB at most). */
const LOW_TABLE_LIMIT = 2 ** 14;

/** How long the async paths may keep the event loop from turning (see IdGenerator.#turnDue). */
const TURN_AFTER_MS = 4;
/** How many async calls pass between looks at the time for that. */
const TURN_CHECK_EVERY = 256;

/** The most IDs one `nextIds` call hands out. */
export const MAX_BATCH = 2 ** 24;

/**
 * Where a generator keeps its state. By default the generator holds it; a cell in shared memory
 * lets the threads of one process share one machine ID (each thread's generator takes slots
 * from the same cell).
 */
export interface StateCell {
  /** The current state: the last tick used and the last sequence given in it. */
  load(): GeneratorState;
  /**
   * Stores `next` only if the state is still `prev`, and says whether it did, so that
   * concurrent takers retry instead of sharing a slot. May throw instead (a fenced shared cell
   * does): the error is what the generator's call fails with.
   */
  commit(prev: GeneratorState, next: GeneratorState): boolean;
  /**
   * Called with the generator's layout and machine ID when it takes a machine ID (at
   * construction, and when it adopts a renewed claim). A cell made for another layout or
   * machine ID throws, since its slots would mean other IDs.
   */
  attach?(layout: Layout, machineId: number): void;
  /**
   * Called when the generator stops holding its claim (the claim was lost, or the generator was
   * closed), before it records its last tick. A shared cell then fails every other taker's
   * commit, so no thread issues an ID under a machine ID that is no longer held.
   */
  fence?(error: Error): void;
}

/** The default cell: plain memory of one generator. Calls never overlap in one thread, so every commit succeeds. */
class LocalCell implements StateCell {
  #state: GeneratorState;
  constructor(state: GeneratorState) {
    this.#state = state;
  }
  load(): GeneratorState {
    return this.#state;
  }
  commit(_prev: GeneratorState, next: GeneratorState): boolean {
    this.#state = next;
    return true;
  }
}

/**
 * The options every generator on this engine takes besides its layout and machine ID.
 * `SonyflakeSettings` and `SnowflakeSettings` extend these.
 */
export interface GeneratorSettings extends SameMachineIdSetting {
  /** Where time comes from (`now()` in Unix ms). Default: the wall clock (`wallClock`, sub-ms). */
  readonly clock?: Clock;
  /**
   * How far, in ms, the clock may be behind the tick the generator must use next before a call
   * fails with ClockMovedBackwardsError instead of waiting. Default 1000; 0 never waits for a
   * clock that went back; Infinity waits as long as it takes (Go's behaviour).
   * @throws InvalidArgumentError at construction for a negative number, NaN or a non-number.
   */
  readonly maxClockBackwardMs?: number;
  /**
   * Start each new tick's sequence at a random value below this bound instead of 0, so that IDs
   * at low traffic do not all end in sequence 0 (Leaf uses 100). The ticks then hold on average
   * (bound - 1) / 2 fewer IDs. Default: off (0, as in Go). Range: an integer from 0 to 2^sequenceBits.
   * @throws InvalidArgumentError at construction for anything else.
   */
  readonly randomSequenceBound?: number;
  /** Receives errors from recording a claim's time and from renewing a lost claim. Default: a process warning. */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the generator keeps its state. Default: in the generator. Pass
   * `sharedStateCell(createSharedState(layout, machineId))`, one state handed to each worker
   * thread, to let the threads of a process share one machine ID; the generator's layout and
   * machine ID must then be the shared state's, else InvalidArgumentError. See StateCell.
   */
  readonly state?: StateCell;
}

/**
 * What an IdGenerator is built from. Sonyflake and Snowflake build these from their own
 * settings after checking the layout and the machine ID; the generator checks the rest at
 * construction, so a bad option fails there and not mid-run.
 */
export interface GeneratorOptions extends GeneratorSettings {
  /** The bit layout, from `defineLayout` (not checked again here). */
  readonly layout: Layout;
  /**
   * The machine ID, already resolved (`resolveMachineId` runs providers and checks): a number, or
   * a claim the generator watches. Must be an integer in [0, 2^machineBits), else
   * InvalidMachineIdError at construction (and a renewed claim outside it is released).
   */
  readonly machineId: number | MachineIdClaim;
}

function checkNonNegative(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new InvalidArgumentError(
      `${what}: expected a number of ms, 0 or more, received ${received(value)}`,
    );
  }
  return value;
}

/**
 * The one generator: the state machine of `state.ts` driven by a clock, a machine ID and a
 * layout. Sonyflake and snowflake are this class with their own layouts and defaults.
 *
 * Calls never overlap in one thread, so a slot is taken (state updated) synchronously before
 * any wait: concurrent `nextId()` calls get distinct slots in call order.
 */
export class IdGenerator {
  /** The layout every ID of this generator follows. */
  readonly layout: Layout;
  readonly #clock: Clock;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #sleepSync: (ms: number) => void;
  /** Longest wait allowed: one tick of normal roll-over plus the clock-back bound. */
  readonly #waitBound: number;
  readonly #maxClockBackwardMs: number;
  readonly #randomBound: number;
  readonly #onError: (error: unknown) => void;
  readonly #cell: StateCell;
  #machine = 0;
  // The machine ID moved to its place in the low bits (it sits above or below the sequence).
  #machineLow = 0;
  /** When the async paths last let the event loop turn, and calls since the last look (see #turnDue). */
  #turnedAt = performance.now();
  #callsSinceCheck = 0;
  #turn: Promise<void> | null = null;
  /** The low bits of the ID for each sequence value under the current machine ID (see #setMachine). */
  #lows: bigint[] | undefined;
  #claim: MachineIdClaim | undefined;
  #lost: Error | null = null;
  #closed = false;
  /** Frees this generator's place in the misuse guard (registry.ts). */
  readonly #leave: () => void;
  #recordTimer: ReturnType<typeof setInterval> | undefined;
  #recorded = -1;
  // The time field shifted into place, cached per tick: a tick holds many IDs.
  #baseTick = -1;
  #base = 0n;

  /**
   * @throws InvalidArgumentError for a clock without a working `now()`, or an option out of
   * range; whatever the state cell's `attach` throws (a shared cell made for another layout or
   * machine ID).
   */
  constructor(options: GeneratorOptions) {
    this.layout = options.layout;
    const clock = options.clock === undefined ? wallClock : checkClock(options.clock);
    this.#clock = clock;
    this.#sleep = clock.sleep ? clock.sleep.bind(clock) : sleep;
    this.#sleepSync = clock.sleepSync ? clock.sleepSync.bind(clock) : sleepSync;
    this.#maxClockBackwardMs = checkNonNegative(
      options.maxClockBackwardMs ?? DEFAULT_MAX_CLOCK_BACKWARD_MS,
      'maxClockBackwardMs',
    );
    this.#waitBound = this.layout.timeUnitMs + this.#maxClockBackwardMs;
    const bound = options.randomSequenceBound ?? 0;
    if (!Number.isInteger(bound) || bound < 0 || bound > this.layout.maxSequence + 1) {
      throw new InvalidArgumentError(
        `randomSequenceBound: expected an integer from 0 (off) to ${this.layout.maxSequence + 1}, received ${received(bound)}`,
      );
    }
    this.#randomBound = bound;
    this.#onError = options.onError ?? ((error) => process.emitWarning(error as Error));
    this.#cell = options.state ?? new LocalCell(initialState(this.layout));
    this.#leave = enterLive(
      this,
      this.layout,
      idOf(options.machineId),
      shareOf(options.state),
      options.sameMachineId,
    );
    this.#adopt(options.machineId);
  }

  /** The machine ID IDs are issued under now (it can change when a lost claim is renewed). */
  get machine(): number {
    return this.#machine;
  }

  /**
   * The next ID, waiting with a timer when the tick is used up: never blocks the event loop.
   *
   * Rejects with OverTimeLimitError once the layout's lifetime is over; ClockMovedBackwardsError
   * when the clock is further behind than `maxClockBackwardMs`; ClockStalledError when it stops
   * advancing during a wait; MachineIdLostError while the claim is lost; GeneratorClosedError
   * after `close()`.
   */
  nextId(): Promise<bigint> {
    let slot: Slot;
    let id: bigint;
    try {
      slot = this.#take();
      id = this.#idOf(slot);
    } catch (error) {
      return Promise.reject(error);
    }
    if (slot.waitMs > 0) return this.#wait(slot).then(() => id);
    // Calls made while a turn is pending resolve after it, so they still resolve in call order.
    if (this.#turn !== null) return this.#turn.then(() => id);
    if (this.#turnDue()) {
      const turn = new Promise<void>((resolve) => setImmediate(resolve));
      this.#turn = turn;
      void turn.then(() => {
        if (this.#turn === turn) this.#turn = null;
      });
      return turn.then(() => id);
    }
    return Promise.resolve(id);
  }

  /**
   * The next ID, blocking this thread in `Atomics.wait` when the tick is used up (at most one
   * tick, unless the clock went back). Use in worker threads and scripts; on a server's main
   * thread prefer `nextId()`.
   * @throws what `nextId()` rejects with.
   */
  nextIdSync(): bigint {
    const slot = this.#take();
    const id = this.#idOf(slot);
    if (slot.waitMs > 0) this.#waitSync(slot);
    return id;
  }

  /**
   * `n` IDs in increasing order. Yields to the event loop while waiting and every few ms of work.
   * Rejects with InvalidArgumentError unless `n` is an integer from 0 to MAX_BATCH (2^24), and
   * otherwise as `nextId()` does.
   */
  async nextIds(n: number): Promise<bigint[]> {
    if (!Number.isInteger(n) || n < 0 || n > MAX_BATCH) {
      throw new InvalidArgumentError(
        `nextIds: expected a count from 0 to ${MAX_BATCH}, received ${received(n)}`,
      );
    }
    const ids = new Array<bigint>(n);
    for (let i = 0; i < n; i++) {
      const slot = this.#take();
      ids[i] = this.#idOf(slot);
      if (slot.waitMs > 0) await this.#wait(slot);
      else if (this.#turnDue()) await new Promise((resolve) => setImmediate(resolve));
    }
    return ids;
  }

  /**
   * Whether the async paths should let the event loop turn before handing out the next ID. They
   * wait with a timer when a tick is used up, which turns it; but when IDs are asked for more
   * slowly than the layout allows (a ceiling that never binds, or a 1 ms tick that the async path
   * cannot fill), every call resolves at once, as a microtask, and a caller awaiting them in a
   * loop would hold the loop for as long as it runs. So every TURN_CHECK_EVERY calls, when the
   * loop has not turned for TURN_AFTER_MS, the next ID is handed out from setImmediate.
   */
  #turnDue(): boolean {
    if (++this.#callsSinceCheck < TURN_CHECK_EVERY) return false;
    this.#callsSinceCheck = 0;
    const now = performance.now();
    if (now - this.#turnedAt < TURN_AFTER_MS) return false;
    this.#turnedAt = now;
    return true;
  }

  /**
   * The ID this layout gives an instant, a sequence and a machine ID (default: this generator's),
   * without taking a slot: for tests, fixtures and range queries. See the module function
   * `compose` for the checks and errors.
   */
  compose(time: Date | number, sequence: number, machine: number = this.#machine): bigint {
    return compose(this.layout, time, sequence, machine);
  }

  /** Splits an ID of this layout into its fields. @throws InvalidIdError when it is not one. */
  decompose(id: IdInput): DecomposedId {
    return decompose(this.layout, id);
  }

  /** The start of the tick an ID of this layout was issued in. @throws InvalidIdError when it is not one. */
  toTime(id: IdInput): Date {
    return toTime(this.layout, id);
  }

  /**
   * Stops the generator: records the time reached on its claim and releases it. Further calls
   * fail with GeneratorClosedError. Safe to call more than once.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#leave();
    const closed = new GeneratorClosedError('the generator is closed; create a new one to issue IDs');
    this.#lost = closed;
    clearInterval(this.#recordTimer);
    const claim = this.#claim;
    if (!claim) return;
    // Other threads sharing the state stop first, so the time recorded covers every ID issued.
    this.#cell.fence?.(closed);
    await this.#record(claim);
    await claim.release();
  }

  #take(): Slot {
    this.#checkHeld();
    const now = this.#clock.now();
    for (;;) {
      const prev = this.#cell.load();
      const first = this.#randomBound && Math.floor(Math.random() * this.#randomBound);
      const slot = advance(prev, now, this.layout, first);
      // Checked before the commit, so a refused call takes no slot.
      if (slot.waitMs > this.#waitBound) throw this.#clockError(slot.waitMs, slot.elapsed);
      if (this.#cell.commit(prev, slot)) return slot;
    }
  }

  #idOf(slot: Slot): bigint {
    if (slot.elapsed !== this.#baseTick) {
      this.#baseTick = slot.elapsed;
      this.#base = BigInt(slot.elapsed) << this.layout.timeShift;
    }
    const low =
      this.#lows?.[slot.sequence] ?? BigInt(slot.sequence * this.layout.sequenceScale + this.#machineLow);
    return this.#base | low;
  }

  // Every ID allocates; at millions of IDs a second, each allocation saved means fewer young-
  // generation collections, whose pauses are what cost a 1 ms tick its last slots. So the low
  // bits (sequence and machine) are made once per machine ID for every sequence value, where
  // that table is small.
  #setMachine(machineId: number): void {
    this.#machine = machineId;
    this.#machineLow = machineId * this.layout.machineScale;
    const size = this.layout.maxSequence + 1;
    this.#lows =
      size > LOW_TABLE_LIMIT
        ? undefined
        : Array.from({ length: size }, (_, sequence) =>
            BigInt(sequence * this.layout.sequenceScale + this.#machineLow),
          );
  }

  // The ID must not be handed out before its tick starts. Timers can fire a little early
  // relative to the clock, and the clock can move back meanwhile, so re-read it after each wait.
  #waitSync(slot: Slot): void {
    const start = tickStartMs(this.layout, slot.elapsed);
    let slept = 0;
    for (let left = slot.waitMs; left > 0; left = start - this.#clock.now()) {
      this.#checkWait(left, slept, slot);
      this.#sleepSync(left);
      slept += left;
    }
    this.#checkHeld();
  }

  async #wait(slot: Slot): Promise<void> {
    const start = tickStartMs(this.layout, slot.elapsed);
    let slept = 0;
    for (let left = slot.waitMs; left > 0; left = start - this.#clock.now()) {
      this.#checkWait(left, slept, slot);
      await this.#sleep(left);
      slept += left;
    }
    this.#turnedAt = performance.now();
    this.#checkHeld();
  }

  /**
   * A wait ends with an error rather than going on for ever: when the clock has gone back past
   * the bound, or when it has not moved although we slept more than the whole wait and the
   * bound (a clock that stands still would otherwise keep us sleeping).
   */
  #checkWait(left: number, slept: number, slot: Slot): void {
    if (left > this.#waitBound) throw this.#clockError(left, slot.elapsed);
    if (slept > slot.waitMs + this.#waitBound) {
      throw new ClockStalledError(
        `the clock did not reach tick ${slot.elapsed} (${new Date(tickStartMs(this.layout, slot.elapsed)).toISOString()}) after ${Math.round(slept)} ms of sleeping for a ${Math.ceil(slot.waitMs)} ms wait; expected a clock that advances`,
      );
    }
  }

  /** A lost claim fences every call, and an ID that was waiting for its tick too. */
  #checkHeld(): void {
    // A claim that can tell it has lapsed aborts its signal here, which sets #lost at once.
    if (this.#lost === null) this.#claim?.verify?.();
    if (this.#lost !== null) throw this.#lost;
  }

  #clockError(waitMs: number, tick: number): ClockMovedBackwardsError {
    const behindMs = waitMs - this.layout.timeUnitMs;
    return new ClockMovedBackwardsError(
      `the clock is ${Math.ceil(behindMs)} ms behind the last tick used (tick ${tick} starts at ${new Date(tickStartMs(this.layout, tick)).toISOString()}); expected at most maxClockBackwardMs = ${this.#maxClockBackwardMs} ms`,
      behindMs,
    );
  }

  #adopt(source: number | MachineIdClaim): void {
    if (this.#closed) {
      if (isClaim(source)) Promise.resolve(source.release()).catch(this.#onError);
      return;
    }
    // Checked here rather than only by the generators built on this class: a machine ID that
    // does not fit would spill into the sequence field and collide with other machines' IDs.
    checkMachineId(this.layout, isClaim(source) ? source.machineId : source);
    if (!isClaim(source)) {
      this.#cell.attach?.(this.layout, source);
      this.#setMachine(source);
      return;
    }
    this.#cell.attach?.(this.layout, source.machineId);
    this.#claim = source;
    this.#setMachine(source.machineId);
    if (source.notBefore !== undefined) {
      const seeded = initialState(this.layout, source.notBefore);
      for (let prev = this.#cell.load(); seeded.elapsed >= prev.elapsed; prev = this.#cell.load()) {
        if (this.#cell.commit(prev, seeded)) break;
      }
    }
    this.#lost = null;
    if (source.record) {
      clearInterval(this.#recordTimer);
      const every = checkNonNegative(
        source.recordIntervalMs ?? DEFAULT_RECORD_INTERVAL_MS,
        'recordIntervalMs',
      );
      this.#recordTimer = setInterval(() => void this.#record(source), every);
      this.#recordTimer.unref();
    }
    const signal = source.signal;
    if (signal) {
      if (signal.aborted) this.#fence(source);
      else signal.addEventListener('abort', () => this.#fence(source), { once: true });
    }
  }

  #fence(claim: MachineIdClaim): void {
    if (claim !== this.#claim || this.#closed) return;
    const reason = claim.signal?.reason;
    const lost = new MachineIdLostError(
      `machine ID ${claim.machineId} is no longer held${reason instanceof Error ? `: ${reason.message}` : ''}; no IDs are issued until it is claimed again`,
      { cause: reason },
    );
    this.#lost = lost;
    clearInterval(this.#recordTimer);
    this.#cell.fence?.(lost);
    if (claim.renew) {
      claim
        .renew()
        .then((next) => {
          try {
            this.#adopt(next);
          } catch (error) {
            // A renewed claim this generator cannot use (e.g. its shared state is fenced) must not stay held.
            Promise.resolve(next.release()).catch(this.#onError);
            throw error;
          }
        })
        .catch((error) => this.#onError(error));
    }
  }

  async #record(claim: MachineIdClaim): Promise<void> {
    const tick = this.#cell.load().elapsed;
    if (!claim.record || tick === this.#recorded || claim !== this.#claim) return;
    try {
      // The last millisecond of the tick: a successor's first tick must come after all of it.
      await claim.record(tickStartMs(this.layout, tick + 1) - 1);
      this.#recorded = tick;
    } catch (error) {
      this.#onError(error);
    }
  }

  /** `await using generator = ...` closes it (and releases a claimed machine ID) at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** For structured logs: the layout's name, the machine ID and whether the generator is closed. */
  toJSON(): GeneratorView {
    return { layout: this.layout.name, machineId: this.#machine, closed: this.#closed };
  }

  /** What `console.log` and `util.inspect` show: the class, the layout's name and the machine ID. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    const { layout, machineId, closed } = this.toJSON();
    return `${this.constructor.name} { layout: '${layout}', machineId: ${machineId}${closed ? ', closed' : ''} }`;
  }
}
