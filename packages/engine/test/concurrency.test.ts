import { describe, expect, it } from 'vitest';
import { FakeClock } from '../src/clock.js';
import { checkGeneratorOptions, IdGenerator, type StateCell } from '../src/generator.js';
import { defineLayout, tickStartMs } from '../src/layout.js';
import { createSharedState, sharedStateCell } from '../src/shared.js';
import { SONYFLAKE_SPEC, TWITTER_SPEC } from './layouts.js';

// Many callers at once, as in a server: the rules must hold for every one of them, not only
// for a single caller. The clock is a FakeClock whose sleeps wait until the test moves time
// (autoAdvance: false), so callers see time pass as they would with real timers, and every
// resolution can be checked against the clock at that moment.

const sonyflake = defineLayout(SONYFLAKE_SPEC);
const twitter = defineLayout(TWITTER_SPEC);
const T0 = Date.UTC(2026, 10, 22, 12) + 3; // 3 ms into a Sonyflake tick

interface Seen {
  /** IDs in the order their calls resolved. */
  resolved: bigint[];
  /** IDs handed out before their tick started, by the clock at resolution, and the largest lead in ms. */
  ahead: number;
  maxLeadMs: number;
  errors: unknown[];
}

function seen(): Seen {
  return { resolved: [], ahead: 0, maxLeadMs: 0, errors: [] };
}

function note(s: Seen, gen: IdGenerator, clock: FakeClock, ids: bigint[]): void {
  for (const id of ids) {
    const lead = tickStartMs(gen.layout, gen.decompose(id).time) - clock.now();
    if (lead > 0) {
      s.ahead++;
      s.maxLeadMs = Math.max(s.maxLeadMs, lead);
    }
    s.resolved.push(id);
  }
}

/** Moves the clock in small steps, letting callers run between steps, until `done` settles. */
async function drive(clock: FakeClock, done: Promise<unknown>, stepMs: number): Promise<void> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  for (let guard = 0; !finished; guard++) {
    if (guard > 1_000_000) throw new Error('callers did not finish');
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(stepMs);
  }
}

function outOfOrder(ids: bigint[]): number {
  let count = 0;
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) count++;
  return count;
}

/**
 * `callers` loops, all at once, each awaiting `calls` draws one after another: `draw(caller, i)`
 * is the generator's own promise (nextId by default, or a nextIds batch), awaited once, so that
 * IDs are noted in the order the generator resolved them.
 */
async function loops(
  gen: IdGenerator,
  clock: FakeClock,
  callers: number,
  calls: number,
  stepMs: number,
  draw: (caller: number, i: number) => Promise<bigint | bigint[]> = () => gen.nextId(),
) {
  const s = seen();
  const all = Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      for (let i = 0; i < calls; i++) {
        try {
          const ids = await draw(c, i);
          note(s, gen, clock, typeof ids === 'bigint' ? [ids] : ids);
        } catch (error) {
          s.errors.push(error);
        }
      }
    }),
  );
  await drive(clock, all, stepMs);
  return s;
}

describe.each([2, 16, 128])('%i concurrent callers', (callers) => {
  // Enough calls that the callers fill many ticks: the ceiling binds the whole run.
  const calls = Math.ceil(4096 / callers);

  it('nextId: no ID before its tick, resolved in ID order, no error, every slot used', async () => {
    const clock = new FakeClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock }));
    const s = await loops(gen, clock, callers, calls, 0.5);
    expect(s.errors).toEqual([]);
    expect(s.resolved).toHaveLength(callers * calls);
    expect({ ahead: s.ahead, maxLeadMs: s.maxLeadMs }).toEqual({ ahead: 0, maxLeadMs: 0 });
    expect(outOfOrder(s.resolved)).toBe(0);
    // No slot wasted: 256 IDs in every tick but the last.
    const ticks = new Set(s.resolved.map((id) => gen.decompose(id).time));
    expect(ticks.size).toBe(Math.ceil((callers * calls) / 256));
  });

  it('nextIds of mixed sizes: no ID before its tick, batches resolved in ID order and never interleaved, no error', async () => {
    const clock = new FakeClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock }));
    const sizes = [1, 7, 100, 300, 1];
    const s = await loops(gen, clock, callers, Math.ceil(16 / Math.sqrt(callers)), 0.5, (c, i) =>
      gen.nextIds(sizes[(c + i) % sizes.length]!),
    );
    expect(s.errors).toEqual([]);
    expect({ ahead: s.ahead, maxLeadMs: s.maxLeadMs }).toEqual({ ahead: 0, maxLeadMs: 0 });
    // Each batch's IDs are consecutive in resolution order: no batch was overtaken at a tick.
    expect(outOfOrder(s.resolved)).toBe(0);
  });

  it('nextId and nextIds mixed, on a 1 ms layout: the same three rules', async () => {
    const clock = new FakeClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: twitter, machineId: 1, clock }));
    const s = await loops(gen, clock, callers, Math.ceil(64 / Math.sqrt(callers)), 0.1, (c) =>
      c % 2 === 0 ? gen.nextId() : gen.nextIds(500),
    );
    expect(s.errors).toEqual([]);
    expect({ ahead: s.ahead, maxLeadMs: s.maxLeadMs }).toEqual({ ahead: 0, maxLeadMs: 0 });
    expect(outOfOrder(s.resolved)).toBe(0);
  });

  it('generators of several threads on one shared state (one per caller group): no ID before its tick, each generator in order, no duplicate', async () => {
    const clock = new FakeClock(T0, { autoAdvance: false });
    const shared = createSharedState(sonyflake, 3);
    const gens = [0, 1, 2, 3].map(
      () =>
        new IdGenerator(
          checkGeneratorOptions({ layout: sonyflake, machineId: 3, clock, state: sharedStateCell(shared) }),
        ),
    );
    const perGen = gens.map(() => seen());
    const all = Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        const g = c % gens.length;
        for (let i = 0; i < calls; i++) {
          try {
            note(perGen[g]!, gens[g]!, clock, [await gens[g]!.nextId()]);
          } catch (error) {
            perGen[g]!.errors.push(error);
          }
        }
      }),
    );
    await drive(clock, all, 0.5);
    const every = perGen.flatMap((s) => s.resolved);
    expect(perGen.flatMap((s) => s.errors)).toEqual([]);
    expect(every).toHaveLength(callers * calls);
    expect(new Set(every).size).toBe(every.length);
    expect(perGen.map((s) => s.ahead)).toEqual([0, 0, 0, 0]);
    expect(perGen.map((s) => outOfOrder(s.resolved))).toEqual([0, 0, 0, 0]);
  });
});

describe('waiting callers share one gate', () => {
  it('128 callers waiting for the next tick cost one sleep, not 128', async () => {
    const clock = new FakeClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock }));
    await Promise.all(Array.from({ length: 256 }, () => gen.nextId()));
    const waiting = Promise.all(Array.from({ length: 128 }, () => gen.nextId()));
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.sleeping).toBe(1);
    expect(clock.sleeps).toEqual([7]);
    clock.advance(7);
    const ids = await waiting;
    expect(ids.map((id) => gen.decompose(id).sequence)).toEqual(Array.from({ length: 128 }, (_, i) => i));
  });

  it('a crowd of queued callers is not mistaken for a clock that went back (maxClockBackwardMs 0)', async () => {
    const clock = new FakeClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock, maxClockBackwardMs: 0 }),
    );
    // 10,000 callers at once: 40 ticks of IDs, 390 ms of queue.
    const s = seen();
    const all = Promise.all(
      Array.from({ length: 10_000 }, () =>
        gen.nextId().then(
          (id) => note(s, gen, clock, [id]),
          (error) => s.errors.push(error),
        ),
      ),
    );
    await drive(clock, all, 1);
    expect(s.errors).toEqual([]);
    expect(s.ahead).toBe(0);
    expect(outOfOrder(s.resolved)).toBe(0);
  });
});

describe('one clock reading per tick for callers served together', () => {
  /** A FakeClock that counts its readings. */
  class CountingClock extends FakeClock {
    reads = 0;
    override now(): number {
      this.reads++;
      return super.now();
    }
    /** The time without counting a reading (for the test's own checks). */
    peek(): number {
      return super.now();
    }
  }

  /** IDs whose tick had not started at `atMs`. */
  const aheadAt = (gen: IdGenerator, ids: bigint[], atMs: number): number =>
    ids.filter((id) => tickStartMs(gen.layout, gen.decompose(id).time) > atMs).length;

  it('a nextIds batch reads the clock once per tick it fills, not once per ID, and stays in ticks already started', async () => {
    const clock = new CountingClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock }));
    const before = clock.reads;
    const batch = gen.nextIds(600); // 256 per tick: this tick, then two more
    await new Promise((resolve) => setImmediate(resolve));
    // The first tick is filled from one reading; the second needs the clock (and on a slow
    // machine the pacer may have asked for a turn of the loop on the way: one reading more).
    expect(clock.reads - before).toBeGreaterThanOrEqual(2);
    expect(clock.reads - before).toBeLessThanOrEqual(3);
    let ahead = -1;
    let got: bigint[] = [];
    const done = batch.then((ids) => {
      ahead = aheadAt(gen, ids, clock.peek());
      got = ids;
    });
    await drive(clock, done, 1);
    expect(ahead).toBe(0);
    expect(got).toHaveLength(600);
    expect(outOfOrder(got)).toBe(0);
    // Read per ID, the batch would cost 600 readings; here one per tick plus one per wake-up.
    expect(clock.reads - before).toBeLessThan(40);
  });

  it("queued nextId callers drained together share the drain's reading, and none gets a tick the clock has not reached", async () => {
    const clock = new CountingClock(T0, { autoAdvance: false });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock }));
    await Promise.all(Array.from({ length: 256 }, () => gen.nextId())); // the tick is used up
    const resolved: bigint[] = [];
    let ahead = 0;
    const waiting = Promise.all(
      Array.from({ length: 200 }, () =>
        gen.nextId().then((id) => {
          ahead += aheadAt(gen, [id], clock.peek());
          resolved.push(id);
        }),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    const before = clock.reads;
    clock.advance(7); // the gate opens: one drain serves all 200
    await waiting;
    expect(clock.reads - before).toBe(1);
    expect(ahead).toBe(0);
    expect(resolved).toHaveLength(200);
    expect(outOfOrder(resolved)).toBe(0);
  });

  it('with a clock read per ID (the old way) the same drain would read 200 times: the count above can fail', async () => {
    // Guard for the test above: a generator driven one nextIdSync at a time reads once per ID.
    const clock = new CountingClock(T0 + 10, { autoAdvance: true });
    const gen = new IdGenerator(checkGeneratorOptions({ layout: sonyflake, machineId: 1, clock }));
    const before = clock.reads;
    for (let i = 0; i < 200; i++) gen.nextIdSync();
    expect(clock.reads - before).toBe(200);
  });
});

describe('a thread descheduled while it takes from a shared state', () => {
  it('does not wait out the time it was away: the clock is read after the state is loaded', () => {
    const clock = new FakeClock(T0);
    const shared = createSharedState(twitter, 3);
    const other = sharedStateCell(shared);
    const cell = sharedStateCell(shared);
    let away = false;
    // The first load after `away` is set plays the scheduler: 50 ms pass, and another thread
    // takes a slot of the tick the clock is in by then.
    const preempted: StateCell = {
      reservation: cell.reservation,
      load: () => {
        if (away) {
          away = false;
          clock.advance(50);
          const tick = Math.floor((clock.now() - twitter.epochMs) / twitter.timeUnitMs);
          other.commit(other.load(), { tick: tick, sequence: 0 });
        }
        return cell.load();
      },
      commit: (prev, next) => cell.commit(prev, next),
      check: (nowMs) => cell.check(nowMs),
      attach: (layout, machineId) => cell.attach(layout, machineId),
    };
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout: twitter, machineId: 3, clock, state: preempted }),
    );
    gen.nextIdSync();
    away = true;
    // Past the reservation: the next call loads the state again (and meets the "preemption").
    for (let i = 0; i < 2 * cell.reservation; i++) gen.nextIdSync();
    expect(away).toBe(false);
    // With the reading taken before the load, the state looked 50 ms ahead: a 50 ms sleep.
    expect(clock.sleeps).toEqual([]);
  });
});
