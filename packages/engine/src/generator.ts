import { checkInteger } from './check.js';
import { ClaimWatch } from './claim-watch.js';
import { SLEEP_POLL_TAIL_MS, sleep, sleepSync } from './clock.js';
import { enterLive, shareOf } from './duplicate-guard.js';
import { composeIn, type DecomposedId, decomposeIn, type IdInput, toTimeIn } from './id.js';
import { IdBits } from './id-bits.js';
import type { Layout } from './layout.js';
import { idOf } from './machine.js';
import type { CheckedGeneratorOptions } from './options.js';
import { Waiter, WaitQueue } from './queue.js';
import { SlotTaker, type WaitTrack } from './taker.js';
import type { GeneratorView } from './view.js';

export { DEFAULT_RECORD_INTERVAL_MS } from './claim-watch.js';
export {
  type CheckedGeneratorOptions,
  checkGeneratorOptions,
  DEFAULT_MAX_CLOCK_BACKWARD_MS,
  type GeneratorOptions,
  type GeneratorSettings,
  type StateCell,
} from './options.js';

/** Layouts with ticks up to this long poll the last SLEEP_POLL_TAIL_MS of each async wait (see the constructor). */
const POLL_TAIL_UP_TO_UNIT_MS = 2;

/** The most IDs one `nextIds` call hands out. */
export const MAX_BATCH = 2 ** 24;

/**
 * The one generator: the state machine of `state.ts` driven by a clock, a machine ID and a
 * layout. Sonyflake and snowflake are this class with their own layouts and defaults.
 *
 * The rule it keeps for every caller: an ID is never handed out before its tick starts, and
 * callers get their IDs in the order the IDs were made. The work is split: SlotTaker takes
 * slots with the clock's reading and says how long to wait; WaitQueue lines up async callers
 * behind one gate; IdBits composes IDs; ClaimWatch looks after the machine ID.
 */
export class IdGenerator {
  /** The layout every ID of this generator follows. */
  readonly layout: Layout;
  readonly #sleepSync: (ms: number) => void;
  readonly #taker: SlotTaker;
  readonly #bits: IdBits;
  readonly #queue: WaitQueue;
  readonly #watch: ClaimWatch;
  #machine = 0;
  /** Frees this generator's place in the misuse guard (duplicate-guard.ts). */
  readonly #leave: () => void;

  /**
   * Builds the generator from options checked once, by `checkGeneratorOptions` or a preset
   * (`presetClass`): it checks nothing again.
   * @throws DuplicateGeneratorError (see `sameMachineId`); whatever the state cell's `attach`
   * throws (a shared cell made for another layout or machine ID).
   */
  constructor(options: CheckedGeneratorOptions) {
    const { layout, clock, maxClockBackwardMs, randomSequenceBound, onError, state: cell } = options;
    this.layout = layout;
    const taker = new SlotTaker(layout, clock, maxClockBackwardMs, randomSequenceBound, cell);
    this.#taker = taker;
    this.#bits = new IdBits(layout);
    // Polling the tail of a wait costs CPU; it pays only where a timer's ~1 ms of oversleep
    // would skip a whole tick. On longer ticks the tick is still filled after a late timer.
    const tail = layout.timeUnitMs <= POLL_TAIL_UP_TO_UNIT_MS ? SLEEP_POLL_TAIL_MS : 0;
    this.#queue = new WaitQueue(
      taker,
      this.#bits,
      clock.sleep ? clock.sleep.bind(clock) : (ms) => sleep(ms, tail),
      !clock.sleep,
    );
    this.#sleepSync = clock.sleepSync ? clock.sleepSync.bind(clock) : sleepSync;
    this.#leave = enterLive(
      this,
      layout,
      idOf(options.machineId),
      shareOf(cell ?? undefined),
      options.sameMachineId,
    );
    try {
      this.#watch = new ClaimWatch(
        {
          layout,
          useMachine: (machineId) => {
            cell?.attach?.(layout, machineId);
            taker.forgetReservation();
            this.#machine = machineId;
            this.#bits.useMachine(machineId);
          },
          seed: (notBeforeMs, leadMs) => taker.seed(notBeforeMs, leadMs),
          lastTick: () => taker.lastTick(),
          fence: (error) => {
            taker.forgetReservation();
            cell?.fence?.(error);
          },
          now: () => clock.now(),
          ...(cell?.trustUntil ? { publishTrust: (untilMs: number) => cell.trustUntil?.(untilMs) } : {}),
        },
        options.machineId,
        onError,
      );
    } catch (error) {
      // A machine ID that could not be adopted holds no place in the guard.
      this.#leave();
      throw error;
    }
    taker.guard = this.#watch;
  }

  /** The machine ID IDs are issued under now (it can change when a lost claim is renewed). */
  get machine(): number {
    return this.#machine;
  }

  /**
   * The next ID, waiting with a timer when the tick is used up: never blocks the event loop.
   * Concurrent calls resolve in the order of their IDs, each no earlier than its ID's tick.
   *
   * Rejects with OverTimeLimitError once the layout's lifetime is over (and on every call after
   * that, even when the clock reads lower again, as in Go); ClockMovedBackwardsError
   * when the clock is further behind than `maxClockBackwardMs`; ClockStalledError when it stops
   * advancing during a wait; MachineIdLostError while the claim is lost; GeneratorClosedError
   * after `close()`.
   */
  nextId(): Promise<bigint> {
    const queue = this.#queue;
    // Nobody queued and no turn due: the common case, with no allocation but the ID's.
    if (queue.idle()) {
      let wait: number;
      try {
        wait = this.#taker.take();
      } catch (error) {
        return Promise.reject(error);
      }
      if (wait === 0) return Promise.resolve(this.#id());
      return queue.enqueue(new Waiter(1, null), wait);
    }
    return queue.enqueue(new Waiter(1, null), 0);
  }

  /**
   * The next ID, blocking this thread in `Atomics.wait` when the tick is used up (at most one
   * tick, unless the clock went back). Use in worker threads and scripts; on a server's main
   * thread prefer `nextId()`. It does not queue behind pending `nextId()` calls of this thread.
   * @throws what `nextId()` rejects with.
   */
  nextIdSync(): bigint {
    const taker = this.#taker;
    let wait = taker.take();
    if (wait > 0) {
      const track: WaitTrack = { slept: 0, firstWait: 0, until: 0 };
      do {
        taker.waitAgain(track, wait);
        this.#sleepSync(wait);
        track.slept += wait;
        wait = taker.take();
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
    try {
      checkInteger(n, 'nextIds count', 0, MAX_BATCH);
    } catch (error) {
      return Promise.reject(error);
    }
    const queue = this.#queue;
    const waiter = new Waiter(n, new Array<bigint>(n));
    if (!queue.empty()) return queue.enqueue(waiter, 0);
    let wait: number;
    try {
      wait = queue.fill(waiter);
    } catch (error) {
      return Promise.reject(error);
    }
    if (wait === 0) return Promise.resolve(waiter.ids as bigint[]);
    return queue.enqueue(waiter, wait);
  }

  /**
   * The ID this layout gives an instant, a sequence and a machine ID (default: this generator's),
   * without taking a slot: for tests, fixtures and range queries. See `composeIn` for the
   * checks and errors.
   */
  compose(time: Date | number, sequence: number, machine: number = this.#machine): bigint {
    return composeIn(this.layout, time, sequence, machine);
  }

  /** Splits an ID of this layout into its fields. @throws InvalidIdError when it is not one. */
  decompose(id: IdInput): DecomposedId {
    return decomposeIn(this.layout, id);
  }

  /** The start of the tick an ID of this layout was issued in. @throws InvalidIdError when it is not one. */
  toTime(id: IdInput): Date {
    return toTimeIn(this.layout, id);
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

  /** The ID of the slot just taken. */
  #id(): bigint {
    const slot = this.#taker.slot;
    return this.#bits.of(slot.tick, slot.sequence);
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
