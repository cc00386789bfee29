import type { IdBits } from './id-bits.js';
import { Pacer } from './pacer.js';
import type { SlotTaker, WaitTrack } from './taker.js';

/**
 * An async call waiting its turn: `nextId()` (count 1, into `id`) or `nextIds(n)` (into `ids`).
 * One class for both keeps the queue monomorphic.
 */
export class Waiter implements WaitTrack {
  readonly count: number;
  readonly ids: bigint[] | null;
  id = 0n;
  filled = 0;
  /** ms slept at gates while at the head of the queue, and the wait they belong to (see WaitTrack). */
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
 * The async callers of one generator, served in order behind one gate: when the head must wait
 * for its tick, one timer (or one turn of the loop) wakes the whole queue, not one per caller;
 * and a slot in a future tick is never taken ahead of the clock, so a crowd of waiting callers
 * cannot push the state ahead. Callers resolve in the order of their IDs.
 *
 * All callers served in one synchronous run (a drain, or a `nextIds` batch) get their IDs at the
 * same instant, so one clock reading stands for all of them: after the first slot, the rest of
 * its tick is taken without reading the clock again (SlotTaker.takeNext).
 */
export class WaitQueue {
  readonly #taker: SlotTaker;
  readonly #bits: IdBits;
  readonly #sleep: (ms: number) => Promise<void>;
  /** Whether #sleep is the engine's own (a timer or setImmediate): the loop has turned when it resolves. */
  readonly #sleepTurns: boolean;
  readonly #pacer = new Pacer();
  readonly #queue: Waiter[] = [];
  #head = 0;
  /** ms of the gate (timer) the queue is waiting at, or 0. */
  #gateMs = 0;
  /** True while the current synchronous run has taken a slot with a fresh clock reading. */
  #fresh = false;

  constructor(taker: SlotTaker, bits: IdBits, sleep: (ms: number) => Promise<void>, sleepTurns: boolean) {
    this.#taker = taker;
    this.#bits = bits;
    this.#sleep = sleep;
    this.#sleepTurns = sleepTurns;
  }

  /** True when a call may be served at once: nobody queued and no turn of the loop due. */
  idle(): boolean {
    return this.#head === this.#queue.length && !this.#pacer.due();
  }

  /** True when nobody is queued (a batch may start without counting toward the pacer). */
  empty(): boolean {
    return this.#head === this.#queue.length;
  }

  /**
   * Fills `waiter` now if it can; otherwise queues it. With nobody ahead the gate is armed for
   * `wait` ms (or a turn of the loop for 0). Returns the waiter's promise.
   */
  enqueue<T>(waiter: Waiter, wait: number): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      waiter.resolve = resolve as (value: never) => void;
      waiter.reject = reject;
    });
    const idle = this.#head === this.#queue.length;
    this.#queue.push(waiter);
    if (idle) {
      if (wait > 0) this.#taker.waitAgain(waiter, wait);
      this.#arm(wait);
    }
    return promise;
  }

  /**
   * Takes IDs for `waiter` while they are ready: 0 when it is full, ms to wait, or -1 for a turn
   * of the loop. `fresh` says whether a slot was already taken with a clock reading in this run.
   */
  fill(waiter: Waiter, fresh = false): number {
    const taker = this.#taker;
    const bits = this.#bits;
    const ids = waiter.ids;
    this.#fresh = fresh;
    while (waiter.filled < waiter.count) {
      if (this.#pacer.due()) return -1;
      if (!this.#fresh || !taker.takeNext()) {
        const wait = taker.take();
        if (wait > 0) return wait;
        this.#fresh = true;
      }
      const slot = taker.slot;
      if (ids === null) waiter.id = bits.of(slot.tick, slot.sequence);
      else ids[waiter.filled] = bits.of(slot.tick, slot.sequence);
      waiter.filled++;
    }
    return 0;
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
    const taker = this.#taker;
    const slept = this.#gateMs;
    this.#gateMs = 0;
    this.#fresh = false;
    if (this.#head < queue.length) (queue[this.#head] as Waiter).slept += slept;
    while (this.#head < queue.length) {
      const waiter = queue[this.#head] as Waiter;
      let wait: number;
      try {
        wait = this.fill(waiter, this.#fresh);
        if (wait > 0) taker.waitAgain(waiter, wait);
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
}
