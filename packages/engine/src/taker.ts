import type { Clock } from './clock.js';
import { ClockMovedBackwardsError, ClockStalledError, OverTimeLimitError } from './errors.js';
import { type Layout, tickStartMs } from './layout.js';
import type { StateCell } from './options.js';
import { type GeneratorState, initialState, type MutableSlot, nextSlot } from './state.js';

/** What a taker consults before each slot: the claim watch, which throws while no ID may be issued. */
export interface SlotGuard {
  /** Throws why no ID may be issued now. */
  check(): void;
}

/** One caller's waits, for telling a clock that stalls from a tick that keeps being taken by others. */
export interface WaitTrack {
  /** ms slept since the clock last reached `until`. */
  slept: number;
  /** The wait asked then (0 before the first), and the clock reading it ends at. */
  firstWait: number;
  until: number;
}

/** The generator's own state when no cell is given: mutated in place, so a call allocates nothing. */
interface LocalState {
  tick: number;
  sequence: number;
}

/**
 * Takes slots from the state machine of `state.ts` with the clock's reading, from the
 * generator's own state or from a state cell (then several slots per commit, see
 * StateCell.reservation). It never takes a slot whose tick has not started: `take` says how long
 * to wait instead, and fails when that wait means the clock went back further than allowed.
 * Waiting itself (timers, queues, blocking) is the generator's business.
 */
export class SlotTaker {
  /** The slot last taken: what the next ID is made of after `take()` returned 0. */
  readonly slot: MutableSlot = { tick: 0, sequence: 0, waitMs: 0 };
  /** Asked before every slot; the generator sets it to its claim watch. */
  guard: SlotGuard = { check: () => undefined };
  /** The clock's reading in the last `take`. */
  lastNow = 0;
  /** The tick the last wait was asked for, and the clock reading that wait ends at. */
  waitTick = 0;
  waitUntil = 0;
  readonly #layout: Layout;
  readonly #clock: Clock;
  /** Longest wait allowed: one tick of normal roll-over plus the clock-back bound. */
  readonly #waitBound: number;
  readonly #maxClockBackwardMs: number;
  readonly #randomBound: number;
  readonly #cell: StateCell | null;
  readonly #reservation: number;
  readonly #local: LocalState;
  readonly #scratch: MutableSlot = { tick: 0, sequence: 0, waitMs: 0 };
  /** The last sequence reserved in the slot's tick (cells only); -1 when nothing is reserved. */
  #reservedTo = -1;
  /** The tick a claim's notBefore seeded the state at, and how much longer than the bound a wait for it may be. */
  #seedTick = -1;
  #seedLeadMs = 0;
  /** Set while a caller waits for a tick it rolled over into: that tick starts at sequence 0, as in Go, not at a random one. */
  #rolledOver = false;
  /** The last tick an ID was taken in before the state was set past the time limit (see #passLimit); -1 before. */
  #lastTickInLimit = -1;

  constructor(
    layout: Layout,
    clock: Clock,
    maxClockBackwardMs: number,
    randomBound: number,
    cell: StateCell | null,
  ) {
    this.#layout = layout;
    this.#clock = clock;
    this.#maxClockBackwardMs = maxClockBackwardMs;
    this.#waitBound = layout.timeUnitMs + maxClockBackwardMs;
    this.#randomBound = randomBound;
    this.#cell = cell;
    const reservation = cell?.reservation;
    this.#reservation =
      typeof reservation === 'number' && Number.isInteger(reservation) && reservation > 1 ? reservation : 1;
    const start = initialState(layout);
    this.#local = { tick: start.tick, sequence: start.sequence };
  }

  /**
   * Reads the clock and takes the next slot into `slot`, returning 0, or returns how many ms to
   * wait before trying again.
   */
  take(): number {
    // The clock first, then the checks: the slot is dated by this reading, so it is never later
    // than the moment the claim was last found held. Checked first, a pause between the check
    // and the reading (a SIGSTOP, a long GC) would date an ID after the claim's deadline, when
    // its successor may already issue in those ticks.
    const now = this.#clock.now();
    this.lastNow = now;
    const slot = this.slot;
    const cell = this.#cell;
    if (cell === null) {
      this.guard.check();
      const local = this.#local;
      const waitMs = this.#slotAfter(local, now, slot, null);
      if (waitMs > 0) return waitMs;
      local.tick = slot.tick;
      local.sequence = slot.sequence;
      this.#rolledOver = false;
      return 0;
    }
    // A slot reserved earlier, once the clock is in its tick (a clock that went back since
    // makes the reservation wait like any other slot: take afresh).
    if (slot.sequence < this.#reservedTo && tickStartMs(this.#layout, slot.tick) <= now) {
      this.#checkHeld(cell, now);
      slot.sequence++;
      return 0;
    }
    return this.#reserve(cell);
  }

  /**
   * Throws unless IDs may be dated `now` on `cell`: the claim is held (the guard) and the cell is
   * neither fenced nor past the holder's trust deadline. A reserved slot is refused too.
   */
  #checkHeld(cell: StateCell, now: number): void {
    this.guard.check();
    cell.check?.(now);
  }

  /**
   * Takes the slot after the last one in the same tick without reading the clock again, and
   * says whether there was one. Only for callers served in the same synchronous run as a
   * `take()` that returned 0 (the IDs of one `nextIds` batch, the queue served by one drain):
   * that reading stands for all of them, so the tick has started, and a tick's worth of IDs
   * costs one clock read instead of one per ID. Returns false when the tick is used up (or,
   * with a cell, the reservation): call `take()`.
   */
  takeNext(): boolean {
    const slot = this.slot;
    const cell = this.#cell;
    if (cell === null) {
      this.guard.check();
      const local = this.#local;
      if (local.sequence >= this.#layout.maxSequence || local.tick !== slot.tick) return false;
      local.sequence++;
      slot.sequence = local.sequence;
      return true;
    }
    if (slot.sequence >= this.#reservedTo) return false;
    this.#checkHeld(cell, this.lastNow);
    slot.sequence++;
    return true;
  }

  /** The latest tick any ID was (or may have been) issued in. */
  lastTick(): number {
    if (this.#lastTickInLimit >= 0) return this.#lastTickInLimit;
    return this.#cell === null ? this.#local.tick : this.#cell.load().tick;
  }

  /** Drops the slots reserved from a cell (the machine ID changed, or the state was fenced). */
  forgetReservation(): void {
    this.#reservedTo = -1;
  }

  /** No ID for a tick at or before `notBeforeMs` (a claim's recorded time); waits for it may be `leadMs` longer. */
  seed(notBeforeMs: number, leadMs: number): void {
    const seeded = initialState(this.#layout, notBeforeMs);
    this.#reservedTo = -1;
    this.#seedTick = seeded.tick;
    this.#seedLeadMs = leadMs;
    const cell = this.#cell;
    if (cell === null) {
      if (seeded.tick >= this.#local.tick) {
        this.#local.tick = seeded.tick;
        this.#local.sequence = seeded.sequence;
      }
      return;
    }
    for (let prev = cell.load(); seeded.tick >= prev.tick; prev = cell.load()) {
      if (cell.commit(prev, seeded)) break;
    }
  }

  /**
   * Called each time `take` told a caller to wait `wait` ms (sync or async: the one rule for
   * both). When the clock got where the caller's last wait ended, the tick was taken by others
   * meanwhile: a new wait. Otherwise the wait ends with an error rather than going on for ever:
   * when the clock has not moved although the caller slept more than the first wait and the
   * bound (a clock that stands still would keep it sleeping). A clock gone back past the bound
   * fails in `take` instead.
   * @throws ClockStalledError
   */
  waitAgain(track: WaitTrack, wait: number): void {
    if (track.firstWait <= 0 || this.lastNow >= track.until) {
      track.firstWait = wait;
      track.until = this.waitUntil;
      track.slept = 0;
    }
    if (track.slept > track.firstWait + this.#waitBound) {
      const tick = this.waitTick;
      throw new ClockStalledError(
        `the clock did not reach tick ${tick} (${new Date(tickStartMs(this.#layout, tick)).toISOString()}) after ${Math.round(track.slept)} ms of sleeping for a ${Math.ceil(track.firstWait)} ms wait; expected a clock that advances`,
      );
    }
  }

  /**
   * Takes up to #reservation slots of the current tick from the cell in one commit. The clock is
   * read after the state is loaded: a thread descheduled between an earlier reading and the
   * load would find the state moved on by the others and wait out the whole time it was
   * descheduled (tens of ms on a loaded machine) for a tick that has already started.
   */
  #reserve(cell: StateCell): number {
    const scratch = this.#scratch;
    for (;;) {
      const prev = cell.load();
      const now = this.#clock.now();
      this.lastNow = now;
      // Checked against the reading that dates the slots, after it (see take()).
      this.#checkHeld(cell, now);
      // Checked before the commit, so a refused call takes no slot.
      const waitMs = this.#slotAfter(prev, now, scratch, cell);
      if (waitMs > 0) return waitMs;
      const last = Math.min(scratch.sequence + this.#reservation - 1, this.#layout.maxSequence);
      if (cell.commit(prev, { tick: scratch.tick, sequence: last })) {
        this.slot.tick = scratch.tick;
        this.slot.sequence = scratch.sequence;
        this.#reservedTo = last;
        this.#rolledOver = false;
        return 0;
      }
    }
  }

  /**
   * The slot after `state` at `now`, into `into`; returns 0, or the ms to wait before it (see
   * #mustWait). A time limit passed is handled by #passLimit (for `cell`, or the local state)
   * and thrown.
   */
  #slotAfter(state: GeneratorState, now: number, into: MutableSlot, cell: StateCell | null): number {
    try {
      nextSlot(state, now, this.#layout, this.#firstSequence(), into);
    } catch (error) {
      this.#passLimit(error, cell);
      throw error;
    }
    return into.waitMs > 0 ? this.#mustWait(into.waitMs, into.tick) : 0;
  }

  /**
   * Once a slot is past the time limit, every later call fails too, even if the clock reads
   * lower again: Go stores the over-limit tick in its state before it returns ErrOverTimeLimit,
   * and keeps failing. Here the state moves to the last slot of the layout (nextSlot then fails
   * from it at any clock reading), and a shared cell is fenced, which also stops the other
   * takers' reserved slots. The try around nextSlot that calls this costs nothing per ID
   * (unlike a flag tested on every take). The claim still records the last tick an ID was
   * really taken in (a fenced cell keeps its state).
   */
  #passLimit(error: unknown, cell: StateCell | null): void {
    if (!(error instanceof OverTimeLimitError)) return;
    this.#reservedTo = -1;
    if (cell?.fence) {
      cell.fence(error);
      return;
    }
    const last = { tick: this.#layout.tickLimit - 1, sequence: this.#layout.maxSequence };
    if (this.#lastTickInLimit < 0) this.#lastTickInLimit = this.lastTick();
    if (cell === null) {
      this.#local.tick = last.tick;
      this.#local.sequence = last.sequence;
      return;
    }
    for (let prev = cell.load(); prev.tick < last.tick || prev.sequence < last.sequence; prev = cell.load()) {
      if (cell.commit(prev, last)) break;
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
    this.waitTick = tick;
    this.waitUntil = this.lastNow + waitMs;
    return waitMs;
  }

  #clockError(waitMs: number, tick: number): ClockMovedBackwardsError {
    const behindMs = waitMs - this.#layout.timeUnitMs;
    return new ClockMovedBackwardsError(
      `the clock is ${Math.ceil(behindMs)} ms behind the last tick used (tick ${tick} starts at ${new Date(tickStartMs(this.#layout, tick)).toISOString()}); expected at most maxClockBackwardMs = ${this.#maxClockBackwardMs} ms`,
      behindMs,
    );
  }
}
