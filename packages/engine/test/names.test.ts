import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decomposeIn } from '../src/id.js';
import { defineLayout, tickOf } from '../src/layout.js';
import { createSharedState, sharedStateCell } from '../src/shared.js';
import { initialState, nextSlot } from '../src/state.js';
import { SONYFLAKE_SPEC } from './layouts.js';

// A tick (one time unit since the epoch) has one name in the engine. Go says elapsedTime; the
// engine kept that word in its state types for a while, next to `tick` in every function, and
// readers had to learn that both meant the same number.

const layout = defineLayout(SONYFLAKE_SPEC);
const T0 = Date.UTC(2026, 10, 24, 1);

describe('the tick has one name', () => {
  it('is `tick` in every state shape the engine hands out or takes', () => {
    expect(Object.keys(initialState(layout))).toEqual(['tick', 'sequence']);
    const slot = nextSlot(initialState(layout), T0, layout);
    expect(Object.keys(slot)).toEqual(['tick', 'sequence', 'waitMs']);
    expect(slot.tick).toBe(tickOf(layout, T0));
    const cell = sharedStateCell(createSharedState(layout, 1));
    expect(Object.keys(cell.load())).toEqual(['tick', 'sequence']);
  });

  it('is not called `elapsed` anywhere in the engine source', () => {
    const dir = join(import.meta.dirname, '..', 'src');
    const uses = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        readFileSync(join(dir, name), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${name}:${i + 1}`, line }))
          .filter(({ line }) => /\belapsed\b/.test(line)),
      )
      .map(({ where }) => where);
    expect(uses).toEqual([]);
  });

  it('keeps Go\'s "time" key in a decomposition, holding the tick', () => {
    const id = (BigInt(tickOf(layout, T0)) << layout.timeShift) | 7n;
    const parts = decomposeIn(layout, id);
    expect(parts.time).toBe(tickOf(layout, T0));
    expect(parts).not.toHaveProperty('tick');
  });
});
