import { checkGeneratorSettings, checkOnError } from './check.js';
import { ClaimWatch, checkNonNegative } from './claim-watch.js';
import { type Clock, checkClock, SLEEP_POLL_TAIL_MS, sleep, sleepSync, wallClock } from './clock.js';
import { ClockMovedBackwardsError, ClockStalledError, InvalidArgumentError, received } from './errors.js';
import { compose, type DecomposedId, decompose, type IdInput, toTime } from './id.js';
import { type Layout, lowBits, tickStartMs } from './layout.js';
import { idOf, type MachineIdClaim } from './machine.js';
import { Pacer } from './pacer.js';
import { enterLive, type SameMachineIdSetting, shareOf } from './registry.js';
import { type GeneratorState, initialState, type MutableSlot, nextSlot } from './state.js';
import type { GeneratorView } from './view.js';

export { DEFAULT_RECORD_INTERVAL_MS } from './claim-watch.js';

/** Default for `maxClockBackwardMs`: NTP corrections are usually well under a second. */
export const DEFAULT_MAX_CLOCK_BACKWARD_MS = 1000;
/** Sequences up to this many values get a precomputed table of low bits (16 Ki BigInts, about 0.5 MB at most). */
const LOW_TABLE_LIMIT = 2 ** 14;

/** Layouts with ticks up to this long poll the last SLEEP_POLL_TAIL_MS of each async wait (see the constructor). */
const POLL_TAIL_UP_TO_UNIT_MS = 2;

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
   * How many slots of one tick a generator may take per commit (default 1). The generator hands
   * the extra slots out itself, one per call, each only once the clock is in their tick; a
   * shared cell uses this so that threads contend once per batch instead of once per ID.
   */
  readonly reservation?: number;
  /**
   * Called before the generator hands out a slot it reserved earlier (see `reservation`), with
   * the clock's reading: throws when the state was fenced, or its holder's claim can no longer
   * be trusted at that time.
   */
  check?(nowMs: number): void;
  /**
   * Called by the generator holding the claim with until when (Unix ms) the claim is certainly
   * held (see MachineIdClaim.trustedForMs); a shared cell makes every taker's `check` refuse past it.
   */
  trustUntil?(untilMs: number): void;
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

/** The generator's own state when no cell is given: mutated in place, so a call allocates nothing. */
interface LocalState {
  elapsed: number;
  sequence: number;
}

/**
 * An async call waiting its turn: `nextId()` (count 1, into `id`) or `nextIds(n)` (into `ids`).
 * One class for both keeps the queue monomorphic.
 */
class Waiter {
  readonly count: number;
  readonly ids: bigint[] | null;
  id = 0n;
  filled = 0;
  /** ms slept at gates while at the head of the queue since the clock last reached `until`, the wait asked then, and where it ends (for ClockStalledError). */
  slept = 0;
  firstWait = 0;
  until = 0;
  resolve: (value: never) => void = () => undefined;
  reject: (error: unknown) => void = () => undefined;
  constructor(count: number, ids: bigint[] | null) {
    this.count = count;
    this.ids = ids;
  }
}

/**
 * The one generator: the state machine of `state.ts` driven by a clock, a machine ID and a
 * layout. Sonyflake and snowflake are this class with their own layouts and defaults.
 *
 * The rule it keeps for every caller: an ID is never handed out before its tick starts, and
 * callers get their IDs in the order the IDs were made. Async callers that must wait join one
 * queue behind one gate (one timer per tick, not one per caller); a slot in a future tick is
 * never taken ahead of the clock, so a crowd of waiting callers cannot push the state ahead.
 */
export class IdGenerator {
  /** The layout every ID of this generator follows. */
  readonly layout: Layout;
  readonly #clock: Clock;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #sleepSync: (ms: number) => void;
  /** Whether #sleep is the engine's own (a timer or setImmediate): the loop has turned when it resolves. */
  readonly #sleepTurns: boolean;
  /** Longest wait allowed: one tick of normal roll-over plus the clock-back bound. */
  readonly #waitBound: number;
  readonly #maxClockBackwardMs: number;
  readonly #randomBound: number;
  readonly #cell: StateCell | null;
  readonly #reservation: number;
  readonly #local: LocalState;
  /** The slot of the ID last taken (with a cell: the last one handed out of the reservation). */
  readonly #slot: MutableSlot = { elapsed: 0, sequence: 0, waitMs: 0 };
  readonly #scratch: MutableSlot = { elapsed: 0, sequence: 0, waitMs: 0 };
  /** The last sequence reserved in #slot's tick (cells only); -1 when nothing is reserved. */
  #reservedTo = -1;
  /** The tick a wait was last asked for (for ClockStalledError's message), and the clock reading it starts at. */
  #waitTick = 0;
  #waitUntil = 0;
  /** The clock's reading in the last #take. */
  #lastNow = 0;
  /** The tick a claim's notBefore seeded the state at, and how much longer than the bound a wait for it may be. */
  #seedTick = -1;
  #seedLeadMs = 0;
  /** Set while a caller waits for a tick it rolled over into: that tick starts at sequence 0, as in Go, not at a random one. */
  #rolledOver = false;
  #machine = 0;
  /** The machine ID in its place among the low bits. */
  #machineLowBits = 0;
  /** The low bits of the ID for each sequence value under the current machine ID (see #useMachine). */
  #lowBitsBySequence: bigint[] | undefined;
  /** The time field shifted into place, cached per tick: a tick holds many IDs. */
  #timeBitsOfTick = 0n;
  #tickOfTimeBits = -1;
  readonly #pacer = new Pacer();
  readonly #queue: Waiter[] = [];
  #head = 0;
  /** ms of the gate (timer) the queue is waiting at, or 0. */
  #gateMs = 0;
  readonly #watch: ClaimWatch;
  /** Frees this generator's place in the misuse guard (registry.ts). */
  readonly #leave: () => void;

  /**
   * @throws InvalidArgumentError for a clock without a working `now()`, or an option out of
   * range; whatever the state cell's `attach` throws (a shared cell made for another layout or
   * machine ID).
   */
  constructor(options: GeneratorOptions) {
    checkGeneratorSettings(options);
    this.layout = options.layout;
    const clock = options.clock === undefined ? wallClock : checkClock(options.clock);
    this.#clock = clock;
    // Polling the tail of a wait costs CPU; it pays only where a timer's ~1 ms of oversleep
    // would skip a whole tick. On longer ticks the tick is still filled after a late timer.
    const tail = this.layout.timeUnitMs <= POLL_TAIL_UP_TO_UNIT_MS ? SLEEP_POLL_TAIL_MS : 0;
    this.#sleep = clock.sleep ? clock.sleep.bind(clock) : (ms) => sleep(ms, tail);
    this.#sleepTurns = !clock.sleep;
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
    const onError = checkOnError(options.onError);
    this.#cell = options.state ?? null;
    const reservation = this.#cell?.reservation;
    this.#reservation =
      typeof reservation === 'number' && Number.isInteger(reservation) && reservation > 1 ? reservation : 1;
    const start = initialState(this.layout);
    this.#local = { elapsed: start.elapsed, sequence: start.sequence };
    this.#leave = enterLive(
      this,
      this.layout,
      idOf(options.machineId),
      shareOf(options.state),
      options.sameMachineId,
    );
    try {
      this.#watch = new ClaimWatch(
        {
          layout: this.layout,
          useMachine: (machineId) => this.#useMachine(machineId),
          seed: (notBeforeMs, leadMs) => this.#seed(notBeforeMs, leadMs),
          lastTick: () => (this.#cell === null ? this.#local.elapsed : this.#cell.load().elapsed),
          fence: (error) => {
            this.#reservedTo = -1;
            this.#cell?.fence?.(error);
          },
          now: () => this.#clock.now(),
          ...(this.#cell?.trustUntil
            ? { publishTrust: (untilMs: number) => this.#cell?.trustUntil?.(untilMs) }
            : {}),
        },
        options.machineId,
        onError,
      );
    } catch (error) {
      // A machine ID that could not be adopted holds no place in the guard.
      this.#leave();
      throw error;
    }
  }

  /** The machine ID IDs are issued under now (it can change when a lost claim is renewed). */
  get machine(): number {
    return this.#machine;
  }

  /**
   * The next ID, waiting with a timer when the tick is used up: never blocks the event loop.
   * Concurrent calls resolve in the order of their IDs, each no earlier than its ID's tick.
   *
   * Rejects with OverTimeLimitError once the layout's lifetime is over; ClockMovedBackwardsError
   * when the clock is further behind than `maxClockBackwardMs`; ClockStalledError when it stops
   * advancing during a wait; MachineIdLostError while the claim is lost; GeneratorClosedError
   * after `close()`.
   */
  nextId(): Promise<bigint> {
    // Nobody queued and no turn due: the common case, with no allocation but the ID's.
    if (this.#head === this.#queue.length && !this.#pacer.due()) {
      let wait: number;
      try {
        wait = this.#take();
      } catch (error) {
        return Promise.reject(error);
      }
      if (wait === 0) return Promise.resolve(this.#id());
      return this.#enqueue(new Waiter(1, null), wait);
    }
    return this.#enqueue(new Waiter(1, null), 0);
  }

  /**
   * The next ID, blocking this thread in `Atomics.wait` when the tick is used up (at most one
   * tick, unless the clock went back). Use in worker threads and scripts; on a server's main
   * thread prefer `nextId()`. It does not queue behind pending `nextId()` calls of this thread.
   * @throws what `nextId()` rejects with.
   */
  nextIdSync(): bigint {
    let wait = this.#take();
    if (wait > 0) {
      let first = wait;
      let until = this.#waitUntil;
      let slept = 0;
      do {
        this.#checkStall(slept, first);
        this.#sleepSync(wait);
        slept += wait;
        wait = this.#take();
        // The clock got where we waited for, but other threads took that tick: a new wait, not a stall.
        if (wait > 0 && this.#lastNow >= until) {
          first = wait;
          until = this.#waitUntil;
          slept = 0;
        }
      } while (wait > 0);
    }
    return this.#id();
  }

  /**
   * `n` IDs in increasing order, taken as one turn of the queue: no other async call of this
   * generator gets an ID between them. Yields to the event loop while waiting and every few ms
   * of work. Rejects with InvalidArgumentError unless `n` is an integer from 0 to MAX_BATCH
   * (2^24), and otherwise as `nextId()` does.
   */
  nextIds(n: number): Promise<bigint[]> {
    if (!Number.isInteger(n) || n < 0 || n > MAX_BATCH) {
      return Promise.reject(
        new InvalidArgumentError(`nextIds: expected a count from 0 to ${MAX_BATCH}, received ${received(n)}`),
      );
    }
    const waiter = new Waiter(n, new Array<bigint>(n));
    if (this.#head !== this.#queue.length) return this.#enqueue(waiter, 0);
    let wait: number;
    try {
      wait = this.#fill(waiter);
    } catch (error) {
      return Promise.reject(error);
    }
    if (wait === 0) return Promise.resolve(waiter.ids as bigint[]);
    return this.#enqueue(waiter, wait);
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
   * (and calls still waiting for their tick) fail with GeneratorClosedError. Safe to call more
   * than once.
   */
  close(): Promise<void> {
    this.#leave();
    return this.#watch.close();
  }

  /**
   * Takes the next slot into #slot and returns 0, or returns how many ms to wait before trying
   * again: a slot whose tick has not started is never taken (see nextSlot, rule 4).
   */
  #take(): number {
    this.#watch.check();
    const now = this.#clock.now();
    this.#lastNow = now;
    const slot = this.#slot;
    const cell = this.#cell;
    if (cell === null) {
      const local = this.#local;
      nextSlot(local, now, this.layout, this.#firstSequence(), slot);
      if (slot.waitMs > 0) return this.#mustWait(slot.waitMs, slot.elapsed);
      local.elapsed = slot.elapsed;
      local.sequence = slot.sequence;
      this.#rolledOver = false;
      return 0;
    }
    // Fenced, or past the holder's trust deadline: nothing is handed out, reserved or not.
    cell.check?.(now);
    // A slot reserved earlier, once the clock is in its tick (a clock that went back since
    // makes the reservation wait like any other slot: take afresh).
    if (slot.sequence < this.#reservedTo && tickStartMs(this.layout, slot.elapsed) <= now) {
      slot.sequence++;
      return 0;
    }
    return this.#reserve(cell, now);
  }

  /** Takes up to #reservation slots of the current tick from the cell in one commit. */
  #reserve(cell: StateCell, now: number): number {
    const scratch = this.#scratch;
    for (;;) {
      const prev = cell.load();
      nextSlot(prev, now, this.layout, this.#firstSequence(), scratch);
      // Checked before the commit, so a refused call takes no slot.
      if (scratch.waitMs > 0) return this.#mustWait(scratch.waitMs, scratch.elapsed);
      const last = Math.min(scratch.sequence + this.#reservation - 1, this.layout.maxSequence);
      if (cell.commit(prev, { elapsed: scratch.elapsed, sequence: last })) {
        this.#slot.elapsed = scratch.elapsed;
        this.#slot.sequence = scratch.sequence;
        this.#reservedTo = last;
        this.#rolledOver = false;
        return 0;
      }
    }
  }

  #firstSequence(): number {
    return this.#randomBound === 0 || this.#rolledOver ? 0 : Math.floor(Math.random() * this.#randomBound);
  }

  /**
   * A wait of one tick at most is a roll-over; more means the clock is behind the state (never
   * queued callers: no slot is taken ahead of the clock), and past the bound that fails.
   */
  #mustWait(waitMs: number, tick: number): number {
    // A wait for the first tick after a claim's notBefore may also cover the horizon the
    // previous holder recorded ahead of its clock (a restart after kill -9 waits it out).
    const bound = tick <= this.#seedTick + 1 ? this.#waitBound + this.#seedLeadMs : this.#waitBound;
    if (waitMs > bound) throw this.#clockError(waitMs, tick);
    this.#rolledOver = true;
    this.#waitTick = tick;
    this.#waitUntil = this.#lastNow + waitMs;
    return waitMs;
  }

  /** The ID of #slot. */
  #id(): bigint {
    const slot = this.#slot;
    if (slot.elapsed !== this.#tickOfTimeBits) {
      this.#tickOfTimeBits = slot.elapsed;
      this.#timeBitsOfTick = BigInt(slot.elapsed) << this.layout.timeShift;
    }
    const table = this.#lowBitsBySequence;
    return (
      this.#timeBitsOfTick |
      (table !== undefined
        ? (table[slot.sequence] as bigint)
        : BigInt(slot.sequence * this.layout.sequenceScale + this.#machineLowBits))
    );
  }

  // ---- the async queue: one gate for every waiting caller, served in order ----

  /** Queues `waiter`; with nobody ahead, arms the gate (`wait` ms, or a turn of the loop for 0). */
  #enqueue<T>(waiter: Waiter, wait: number): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      waiter.resolve = resolve as (value: never) => void;
      waiter.reject = reject;
    });
    const idle = this.#head === this.#queue.length;
    this.#queue.push(waiter);
    if (idle) {
      waiter.firstWait = wait;
      waiter.until = this.#waitUntil;
      this.#arm(wait);
    }
    return promise;
  }

  #arm(wait: number): void {
    if (wait > 0) {
      this.#gateMs = wait;
      this.#sleep(wait).then(this.#sleepTurns ? this.#drainAfterTurn : this.#drain, this.#failAll);
    } else {
      setImmediate(this.#drainAfterTurn);
    }
  }

  readonly #drainAfterTurn = (): void => {
    this.#pacer.turned();
    this.#drain();
  };

  /** Serves the queue from its head until a caller must wait (re-arming the gate) or the loop must turn. */
  readonly #drain = (): void => {
    const queue = this.#queue;
    const slept = this.#gateMs;
    this.#gateMs = 0;
    if (this.#head < queue.length) (queue[this.#head] as Waiter).slept += slept;
    while (this.#head < queue.length) {
      const waiter = queue[this.#head] as Waiter;
      let wait: number;
      try {
        wait = this.#fill(waiter);
        if (wait > 0) {
          if (waiter.firstWait <= 0 || this.#lastNow >= waiter.until) {
            waiter.firstWait = wait;
            waiter.until = this.#waitUntil;
            waiter.slept = 0;
          }
          this.#checkStall(waiter.slept, waiter.firstWait);
        }
      } catch (error) {
        this.#head++;
        waiter.reject(error);
        continue;
      }
      if (wait === 0) {
        this.#head++;
        waiter.resolve((waiter.ids ?? waiter.id) as never);
        continue;
      }
      // Under sustained load the queue never empties: drop the served entries now and then.
      if (this.#head > 1024 && this.#head * 2 > queue.length) {
        queue.splice(0, this.#head);
        this.#head = 0;
      }
      this.#arm(wait);
      return;
    }
    queue.length = 0;
    this.#head = 0;
  };

  /** A clock whose sleep rejects fails every queued call with that error. */
  readonly #failAll = (error: unknown): void => {
    this.#gateMs = 0;
    const queue = this.#queue.splice(this.#head);
    this.#queue.length = 0;
    this.#head = 0;
    for (const waiter of queue) waiter.reject(error);
  };

  /** Takes IDs for `waiter` while they are ready: 0 when it is full, ms to wait, or -1 for a turn of the loop. */
  #fill(waiter: Waiter): number {
    const ids = waiter.ids;
    while (waiter.filled < waiter.count) {
      if (this.#pacer.due()) return -1;
      const wait = this.#take();
      if (wait > 0) return wait;
      if (ids === null) waiter.id = this.#id();
      else ids[waiter.filled] = this.#id();
      waiter.filled++;
    }
    return 0;
  }

  /**
   * A wait ends with an error rather than going on for ever: when the clock has not moved
   * although we slept more than the first wait and the bound (a clock that stands still would
   * otherwise keep us sleeping). A clock gone back past the bound fails in #mustWait.
   */
  #checkStall(slept: number, firstWait: number): void {
    if (slept > firstWait + this.#waitBound) {
      const tick = this.#waitTick;
      throw new ClockStalledError(
        `the clock did not reach tick ${tick} (${new Date(tickStartMs(this.layout, tick)).toISOString()}) after ${Math.round(slept)} ms of sleeping for a ${Math.ceil(firstWait)} ms wait; expected a clock that advances`,
      );
    }
  }

  #clockError(waitMs: number, tick: number): ClockMovedBackwardsError {
    const behindMs = waitMs - this.layout.timeUnitMs;
    return new ClockMovedBackwardsError(
      `the clock is ${Math.ceil(behindMs)} ms behind the last tick used (tick ${tick} starts at ${new Date(tickStartMs(this.layout, tick)).toISOString()}); expected at most maxClockBackwardMs = ${this.#maxClockBackwardMs} ms`,
      behindMs,
    );
  }

  // ---- the machine ID, as the claim watch hands it over ----

  // Every ID allocates; at millions of IDs a second, each allocation saved means fewer young-
  // generation collections, whose pauses are what cost a 1 ms tick its last slots. So the low
  // bits (sequence and machine) are made once per machine ID for every sequence value, where
  // that table is small.
  #useMachine(machineId: number): void {
    this.#cell?.attach?.(this.layout, machineId);
    this.#reservedTo = -1;
    this.#machine = machineId;
    this.#machineLowBits = lowBits(this.layout, 0, machineId);
    const size = this.layout.maxSequence + 1;
    this.#lowBitsBySequence =
      size > LOW_TABLE_LIMIT
        ? undefined
        : Array.from({ length: size }, (_, sequence) => BigInt(lowBits(this.layout, sequence, machineId)));
  }

  /** No ID for a tick at or before `notBeforeMs` (a claim's recorded time). */
  #seed(notBeforeMs: number, leadMs: number): void {
    const seeded = initialState(this.layout, notBeforeMs);
    this.#reservedTo = -1;
    this.#seedTick = seeded.elapsed;
    this.#seedLeadMs = leadMs;
    const cell = this.#cell;
    if (cell === null) {
      if (seeded.elapsed >= this.#local.elapsed) {
        this.#local.elapsed = seeded.elapsed;
        this.#local.sequence = seeded.sequence;
      }
      return;
    }
    for (let prev = cell.load(); seeded.elapsed >= prev.elapsed; prev = cell.load()) {
      if (cell.commit(prev, seeded)) break;
    }
  }

  /** `await using generator = ...` closes it (and releases a claimed machine ID) at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** For structured logs: the layout's name, the machine ID and whether the generator is closed. */
  toJSON(): GeneratorView {
    return { layout: this.layout.name, machineId: this.#machine, closed: this.#watch.closed };
  }

  /** What `console.log` and `util.inspect` show: the class, the layout's name and the machine ID. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    const { layout, machineId, closed } = this.toJSON();
    return `${this.constructor.name} { layout: '${layout}', machineId: ${machineId}${closed ? ', closed' : ''} }`;
  }
}
