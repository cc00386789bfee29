import { InvalidArgumentError, OverTimeLimitError, received } from './errors.js';
import { type Layout, tickOf, tickStartMs } from './layout.js';

/**
 * The whole memory of a generator: the last tick it used and the last sequence it gave in it.
 * Everything else (the clock, the machine ID, waiting) lives outside, which is what lets the
 * rules below be tested as a table of (state, now) -> next.
 */
export interface GeneratorState {
  /**
   * The tick last used, counted from the layout's epoch: from 0 to 2^timeBits - 1 (Go's
   * `elapsedTime`; one name, tick, for the concept everywhere in this engine).
   */
  readonly tick: number;
  /** The sequence last given in that tick: from 0 to 2^sequenceBits - 1. */
  readonly sequence: number;
}

/** The next state, which is also the slot the next ID is made of, and how long to wait before handing it out. */
export interface Slot extends GeneratorState {
  /** ms from `now` until the slot's tick starts; 0 when the ID may be returned at once. */
  readonly waitMs: number;
}

/** A Slot the generator reuses for every call, so that taking a slot allocates nothing. */
export interface MutableSlot {
  /** See Slot. */
  tick: number;
  /** See Slot. */
  sequence: number;
  /** See Slot. */
  waitMs: number;
}

/**
 * The state a new generator starts in. As in Go, the sequence starts at its maximum so that
 * the first ID of any fresh tick has sequence 0, and a call within that tick itself rolls
 * over into the next tick.
 *
 * With `notBeforeMs` (the last instant a previous holder of this machine ID recorded), the
 * state starts in that instant's tick, so no ID is issued for a tick at or before it.
 */
export function initialState(layout: Layout, notBeforeMs?: number): GeneratorState {
  const tick = notBeforeMs === undefined ? 0 : Math.max(0, tickOf(layout, notBeforeMs));
  return { tick, sequence: layout.maxSequence };
}

/**
 * Go's NextID as a pure function (sony/sonyflake v2 `NextID`), with one rule Go gets from its
 * mutex and a JS generator must state:
 *
 * 1. `current` is the tick `now` falls in.
 * 2. If the state's tick is behind `current`, move to `current` and start the sequence at
 *    `firstSequence` (0 in Go; a random start spreads low-traffic IDs, see the snowflake docs).
 * 3. Otherwise (same tick, or the clock went back) take the next sequence; when it wraps to 0
 *    the slot is in the following tick. The slot keeps the logical tick: the clock is not read
 *    again.
 * 4. **Never ahead**: whenever the slot's tick lies after `current` (a wrap, or a clock that went
 *    back), `waitMs` is the time until that tick starts, and the ID must not be handed out
 *    before. Go sleeps holding its mutex, so nobody takes a slot past a waiting one; here the
 *    caller must not commit such a slot before its wait is over (the generator re-takes after
 *    waiting), else every later caller would get a slot further ahead without waiting.
 * 5. A tick past the time field's range fails (Go: ErrOverTimeLimit).
 *
 * The tick never decreases, so a clock that steps back cannot produce a duplicate: IDs go on
 * from the last tick used. `out`, when given, receives the result (no allocation).
 */
export function nextSlot(
  state: GeneratorState,
  now: number,
  layout: Layout,
  firstSequence = 0,
  out: MutableSlot = { tick: 0, sequence: 0, waitMs: 0 },
): Slot {
  if (!Number.isFinite(now)) {
    throw new InvalidArgumentError(
      `clock.now(): expected finite Unix milliseconds, received ${received(now)}`,
    );
  }
  const current = tickOf(layout, now);
  let tick = state.tick;
  let sequence: number;
  if (tick < current) {
    tick = current;
    sequence = firstSequence;
  } else {
    // maxSequence < 2^30, so the mask is a safe 32-bit operation.
    sequence = (state.sequence + 1) & layout.maxSequence;
    if (sequence === 0) tick += 1;
  }
  if (tick >= layout.tickLimit) {
    throw new OverTimeLimitError(
      `over the time limit: tick ${tick} does not fit the ${layout.timeBits}-bit time field of the ${layout.name} layout, which ended at ${new Date(tickStartMs(layout, layout.tickLimit)).toISOString()}`,
    );
  }
  out.tick = tick;
  out.sequence = sequence;
  // A float wait (not a Smi that turns into a double) keeps the slot's shape stable for V8.
  out.waitMs = tick > current ? tickStartMs(layout, tick) - now : 0;
  return out;
}
