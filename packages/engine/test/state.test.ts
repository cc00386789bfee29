import { describe, expect, it } from 'vitest';
import { OverTimeLimitError } from '../src/errors.js';
import { defineLayout, tickStartMs } from '../src/layout.js';
import { type GeneratorState, initialState, nextSlot } from '../src/state.js';
import { SONYFLAKE_SPEC } from './layouts.js';

const EPOCH = SONYFLAKE_SPEC.epochMs;
const layout = defineLayout(SONYFLAKE_SPEC);
const at = (tick: number, offsetMs = 0) => tickStartMs(layout, tick) + offsetMs;
const HOUR = 3_600_000;
const YEAR_365 = 365 * 24 * HOUR;

interface Row {
  name: string;
  state: GeneratorState;
  now: number;
  next: { tick: number; sequence: number; waitMs: number };
}

// Each row is one call of Go's NextID: (state, now) -> (state, slot, wait).
const table: Row[] = [
  {
    name: 'fresh state, first call: moves to the current tick with sequence 0',
    state: initialState(layout),
    now: at(100, 3),
    next: { tick: 100, sequence: 0, waitMs: 0 },
  },
  {
    name: 'same tick: the sequence goes up by one',
    state: { tick: 100, sequence: 0 },
    now: at(100, 7),
    next: { tick: 100, sequence: 1, waitMs: 0 },
  },
  {
    name: 'next tick: the sequence restarts at 0',
    state: { tick: 100, sequence: 200 },
    now: at(101, 0),
    next: { tick: 101, sequence: 0, waitMs: 0 },
  },
  {
    name: 'ticks skipped: jumps to the current tick',
    state: { tick: 100, sequence: 5 },
    now: at(5000, 9),
    next: { tick: 5000, sequence: 0, waitMs: 0 },
  },
  {
    name: 'sequence overflow: the slot is in the next tick, wait until it starts',
    state: { tick: 100, sequence: 255 },
    now: at(100, 4),
    next: { tick: 101, sequence: 0, waitMs: 6 },
  },
  {
    name: 'clock back one tick: keeps the last tick, sequence goes on, waits until that tick starts (never ahead)',
    state: { tick: 100, sequence: 7 },
    now: at(99, 5),
    next: { tick: 100, sequence: 8, waitMs: 5 },
  },
  {
    name: 'clock back one tick, tick used up: waits for the tick after the last one (two ticks)',
    state: { tick: 100, sequence: 255 },
    now: at(99, 5),
    next: { tick: 101, sequence: 0, waitMs: 15 },
  },
  {
    name: 'clock back one hour: keeps the last tick, no duplicate; the wait covers the hour (the generator bounds it)',
    state: { tick: 500_000, sequence: 3 },
    now: at(500_000) - HOUR,
    next: { tick: 500_000, sequence: 4, waitMs: HOUR },
  },
  {
    name: 'clock back one hour, tick used up: the wait covers the whole hour (the generator bounds it)',
    state: { tick: 500_000, sequence: 255 },
    now: at(500_000) - HOUR,
    next: { tick: 500_001, sequence: 0, waitMs: HOUR + 10 },
  },
  {
    name: 'the last tick that fits (2^39 - 1)',
    state: { tick: 2 ** 39 - 2, sequence: 9 },
    now: at(2 ** 39 - 1, 1),
    next: { tick: 2 ** 39 - 1, sequence: 0, waitMs: 0 },
  },
];

describe('nextSlot (Go NextID as a pure function)', () => {
  it.each(table)('$name', ({ state, now, next }) => {
    expect(nextSlot(state, now, layout)).toEqual(next);
  });

  it("a slot in the clock's own tick or earlier never waits; one in a later tick always does", () => {
    for (let offset = 0; offset < 10; offset += 0.25) {
      expect(nextSlot({ tick: 100, sequence: 3 }, at(100, offset), layout).waitMs).toBe(0);
      expect(nextSlot({ tick: 100, sequence: 3 }, at(101, offset), layout).waitMs).toBe(0);
      expect(nextSlot({ tick: 101, sequence: 3 }, at(100, offset), layout).waitMs).toBe(10 - offset);
      expect(nextSlot({ tick: 100, sequence: 255 }, at(100, offset), layout).waitMs).toBe(10 - offset);
    }
  });

  it('writes into the slot it is given', () => {
    const out = { tick: 0, sequence: 0, waitMs: 0 };
    expect(nextSlot({ tick: 100, sequence: 3 }, at(100), layout, 0, out)).toBe(out);
    expect(out).toEqual({ tick: 100, sequence: 4, waitMs: 0 });
  });

  it('does not modify the state it is given', () => {
    const state = Object.freeze({ tick: 100, sequence: 255 });
    nextSlot(state, at(100), layout);
    expect(state).toEqual({ tick: 100, sequence: 255 });
  });

  it('starts a fresh tick at the given first sequence (random start)', () => {
    expect(nextSlot({ tick: 1, sequence: 3 }, at(2), layout, 42)).toEqual({
      tick: 2,
      sequence: 42,
      waitMs: 0,
    });
  });

  it('fails at tick 2^39: the time field is full', () => {
    expect(() => nextSlot({ tick: 2 ** 39 - 1, sequence: 0 }, at(2 ** 39), layout)).toThrow(
      OverTimeLimitError,
    );
  });

  it('fails when the last tick that fits rolls over', () => {
    expect(() => nextSlot({ tick: 2 ** 39 - 1, sequence: 255 }, at(2 ** 39 - 1), layout)).toThrow(
      /over the time limit/,
    );
  });

  it('174 years of 365 days after the epoch still fit; 175 do not (Go TestNextID_ReturnsError)', () => {
    expect(nextSlot(initialState(layout), EPOCH + 174 * YEAR_365, layout).tick).toBe((174 * YEAR_365) / 10);
    expect(() => nextSlot(initialState(layout), EPOCH + 175 * YEAR_365, layout)).toThrow(OverTimeLimitError);
  });

  it('refuses a clock that reads NaN instead of freezing the tick', () => {
    expect(() => nextSlot(initialState(layout), Number.NaN, layout)).toThrow(
      /expected finite Unix milliseconds/,
    );
  });
});

describe('initialState', () => {
  it('starts at tick 0 with the sequence at its maximum, as Go does', () => {
    expect(initialState(layout)).toEqual({ tick: 0, sequence: 255 });
  });

  it('with a recorded instant, starts in its tick so the next ID comes strictly after it', () => {
    const recorded = at(1000, 9);
    const state = initialState(layout, recorded);
    expect(state).toEqual({ tick: 1000, sequence: 255 });
    // Even with the clock back before the recorded instant, the next slot is tick 1001.
    expect(nextSlot(state, at(990), layout)).toEqual({ tick: 1001, sequence: 0, waitMs: 110 });
    // With the clock past it, IDs simply go on from now.
    expect(nextSlot(state, at(1002), layout)).toEqual({ tick: 1002, sequence: 0, waitMs: 0 });
  });
});
