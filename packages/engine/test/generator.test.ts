import { describe, expect, it, vi } from 'vitest';
import { type Clock, FakeClock } from '../src/clock.js';
import {
  ClockMovedBackwardsError,
  ClockStalledError,
  GeneratorClosedError,
  InvalidArgumentError,
  InvalidMachineIdError,
  MachineIdLostError,
  OverTimeLimitError,
} from '../src/errors.js';
import { checkGeneratorOptions, type GeneratorOptions, IdGenerator } from '../src/generator.js';
import { defineLayout, tickOf, tickStartMs } from '../src/layout.js';
import { claimOf } from './claims.js';
import { saturate } from './kit.js';
import { SONYFLAKE_SPEC, TWITTER_SPEC } from './layouts.js';

const layout = defineLayout(SONYFLAKE_SPEC);
const T0 = Date.UTC(2026, 10, 22, 12); // tick-aligned

function generator(clock: Clock, extra: Partial<GeneratorOptions> = {}) {
  return new IdGenerator(checkGeneratorOptions({ layout, machineId: 7, clock, ...extra }));
}

function assertIncreasing(ids: bigint[]) {
  for (let i = 1; i < ids.length; i++) {
    if (ids[i]! <= ids[i - 1]!)
      throw new Error(`IDs ${i - 1} and ${i} are out of order: ${ids[i - 1]} ${ids[i]}`);
  }
}

describe('nextIdSync', () => {
  it('fills a tick with 256 IDs, then waits for the next tick instead of reusing a slot', () => {
    const clock = new FakeClock(T0 + 3);
    const gen = generator(clock);
    const ids = Array.from({ length: 256 }, () => gen.nextIdSync());
    expect(ids.map((id) => gen.decompose(id).sequence)).toEqual(Array.from({ length: 256 }, (_, i) => i));
    expect(clock.sleeps).toEqual([]);
    const next = gen.nextIdSync();
    // The 257th ID is in the next tick; the generator slept the 7 ms left of this one.
    expect(clock.sleeps).toEqual([7]);
    expect(gen.decompose(next)).toMatchObject({ time: tickOf(layout, T0) + 1, sequence: 0, machine: 7 });
    assertIncreasing([...ids, next]);
  });

  it('never hands out an ID before its tick starts, even when sleeps end early', () => {
    let now = T0 + 2;
    const shortSleeps: number[] = [];
    const clock: Clock = {
      now: () => now,
      // A timer that fires a little early: wakes after 60% of the time asked for.
      sleepSync: (ms) => {
        shortSleeps.push(ms);
        now += ms * 0.6;
      },
    };
    const gen = generator(clock);
    for (let i = 0; i < 256; i++) gen.nextIdSync();
    const id = gen.nextIdSync();
    expect(shortSleeps.length).toBeGreaterThan(1);
    expect(now).toBeGreaterThanOrEqual(gen.toTime(id).getTime());
  });

  it('waits out a clock that stepped back less than the bound, with no duplicate', () => {
    const clock = new FakeClock(T0);
    const gen = generator(clock, { maxClockBackwardMs: 500 });
    const before = Array.from({ length: 256 }, () => gen.nextIdSync());
    clock.set(T0 - 300);
    const after = gen.nextIdSync();
    expect(clock.sleeps).toEqual([310]);
    assertIncreasing([...before, after]);
  });

  it('fails with ClockMovedBackwardsError past the bound, and recovers once the clock catches up', () => {
    const clock = new FakeClock(T0);
    const gen = generator(clock, { maxClockBackwardMs: 1000 });
    const before = Array.from({ length: 256 }, () => gen.nextIdSync());
    clock.set(T0 - 3_600_000);
    let error: unknown;
    try {
      gen.nextIdSync();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClockMovedBackwardsError);
    expect(error).toMatchObject({ code: 'ERR_IDS_CLOCK_BACKWARDS', behindMs: 3_600_000 });
    expect((error as Error).message).toMatch(/3600000 ms behind .* at most maxClockBackwardMs = 1000 ms/);
    expect(clock.sleeps).toEqual([]);
    // The failed call took no slot: once the clock is back, IDs go on without a gap or a duplicate.
    clock.set(T0 + 10);
    const after = gen.nextIdSync();
    expect(gen.decompose(after)).toMatchObject({ time: tickOf(layout, T0) + 1, sequence: 0 });
    assertIncreasing([...before, after]);
  });

  it('with maxClockBackwardMs 0 it still waits out a normal roll-over', () => {
    const clock = new FakeClock(T0);
    const gen = generator(clock, { maxClockBackwardMs: 0 });
    for (let i = 0; i < 257; i++) gen.nextIdSync();
    expect(clock.sleeps).toEqual([10]);
  });

  it('fails with ClockStalledError instead of sleeping for ever when the clock stands still', async () => {
    const frozen = T0 + 3;
    const sleeps: number[] = [];
    const clock: Clock = {
      now: () => frozen,
      sleepSync: (ms) => void sleeps.push(ms),
      sleep: async (ms) => void sleeps.push(ms),
    };
    const gen = generator(clock, { maxClockBackwardMs: 50 });
    for (let i = 0; i < 256; i++) gen.nextIdSync();
    expect(() => gen.nextIdSync()).toThrow(ClockStalledError);
    // It gave up once it had slept more than the 7 ms wait plus the bound (10 ms tick + 50 ms).
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(7 + 60 + 7);
    const fresh = generator(clock, { maxClockBackwardMs: 50 });
    await fresh.nextIds(256);
    await expect(fresh.nextId()).rejects.toThrow(/did not reach tick .* after \d+ ms of sleeping/);
  });

  it('fails when the clock jumps back during the wait itself', () => {
    let now = T0;
    const clock: Clock = {
      now: () => now,
      sleepSync: () => {
        now -= 60_000;
      },
    };
    const gen = generator(clock);
    for (let i = 0; i < 256; i++) gen.nextIdSync();
    expect(() => gen.nextIdSync()).toThrow(ClockMovedBackwardsError);
  });
});

describe('nextId and nextIds', () => {
  it('gives concurrent callers distinct slots in call order', async () => {
    const clock = new FakeClock(T0);
    const gen = generator(clock);
    const ids = await Promise.all(Array.from({ length: 1000 }, () => gen.nextId()));
    assertIncreasing(ids);
    expect(clock.sleeps.length).toBe(3);
  });

  it('waits with the clock sleep, not by blocking', async () => {
    const clock = new FakeClock(T0 + 5);
    const sleepSync = vi.spyOn(clock, 'sleepSync');
    const sleep = vi.spyOn(clock, 'sleep');
    const gen = generator(clock);
    await gen.nextIds(300);
    expect(sleep).toHaveBeenCalledTimes(1);
    expect(sleep).toHaveBeenCalledWith(5);
    // FakeClock.sleep moves time through sleepSync; only that one call, from sleep itself.
    expect(sleepSync).toHaveBeenCalledTimes(1);
  });

  it('nextIds returns n increasing IDs and validates n', async () => {
    const gen = generator(new FakeClock(T0));
    const ids = await gen.nextIds(5000);
    expect(ids).toHaveLength(5000);
    assertIncreasing(ids);
    expect(await gen.nextIds(0)).toEqual([]);
    await expect(gen.nextIds(-1)).rejects.toThrow(InvalidArgumentError);
    await expect(gen.nextIds(1.5)).rejects.toThrow(/received 1.5/);
    await expect(gen.nextIds(2 ** 24 + 1)).rejects.toThrow(/0 to 16777216/);
    await expect(gen.nextIds('3' as unknown as number)).rejects.toThrow(/"3" \(string\)/);
  });

  it('nextId rejects (does not throw synchronously) when the clock went back too far', async () => {
    const clock = new FakeClock(T0);
    const gen = generator(clock, { maxClockBackwardMs: 10 });
    await gen.nextIds(256);
    clock.set(T0 - 1000);
    const pending = gen.nextId();
    await expect(pending).rejects.toThrow(ClockMovedBackwardsError);
  });
});

describe('the event loop under a saturated async caller', () => {
  // A 22-bit sequence with 1 ms ticks: no caller uses a tick up, so no call ever waits on a timer.
  const unbound = defineLayout({ timeBits: 41, timeUnitMs: 1, sequenceBits: 22, machineBits: 0, epochMs: 0 });

  // The real event loop, measured in this process's CPU time (see saturate).
  it('keeps turning when no call ever has to wait (a ceiling that never binds)', async () => {
    const gen = new IdGenerator(checkGeneratorOptions({ layout: unbound, machineId: 0 }));
    const { count, beats, longestGap } = await saturate(() => gen.nextId(), 300);
    expect(count).toBeGreaterThan(10_000);
    expect(beats).toBeGreaterThan(30);
    expect(longestGap).toBeLessThan(50);
  });

  it('calls made while a turn is pending still resolve in call order', async () => {
    let now = 1_000;
    const spy = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const gen = new IdGenerator(
        checkGeneratorOptions({ layout: unbound, machineId: 0, clock: new FakeClock(T0) }),
      );
      now += 10; // the loop has not turned for 10 ms: the 256th call hands its ID out after a turn
      // Armed before the calls, so it runs before the generator's turn: a marker of that turn.
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      const order: number[] = [];
      const afterTurn: boolean[] = [];
      const calls = Array.from({ length: 600 }, (_, i) =>
        gen.nextId().then((id) => {
          order.push(i);
          afterTurn[i] = turned;
          return id;
        }),
      );
      const ids = await Promise.all(calls);
      assertIncreasing(ids);
      expect(afterTurn.slice(0, 255).every((after) => !after)).toBe(true);
      expect(afterTurn.slice(255).every((after) => after)).toBe(true);
      expect(order).toEqual(Array.from({ length: 600 }, (_, i) => i));
    } finally {
      spy.mockRestore();
    }
  });
});

describe('state cells', () => {
  it('retries when another taker moved a shared cell first, so no two takers share a slot', () => {
    // A cell whose first commit loses a race: another thread took sequence 0 meanwhile.
    let state = { tick: 0, sequence: 255 };
    let raced = false;
    const cell = {
      load: () => state,
      commit: (prev: typeof state, next: typeof state) => {
        if (!raced) {
          raced = true;
          state = { tick: next.tick, sequence: next.sequence };
          return false;
        }
        if (prev !== state) return false;
        state = next;
        return true;
      },
    };
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: 1, clock: new FakeClock(T0), state: cell }),
    );
    expect(gen.decompose(gen.nextIdSync()).sequence).toBe(1);
    expect(state.sequence).toBe(1);
  });
});

describe("Twitter's field order", () => {
  it('puts the machine ID above the sequence in issued IDs, and still rolls over after 4096', () => {
    const twitter = defineLayout(TWITTER_SPEC);
    const clock = new FakeClock(T0);
    const gen = new IdGenerator(checkGeneratorOptions({ layout: twitter, machineId: 1023, clock }));
    const ids = Array.from({ length: 4097 }, () => gen.nextIdSync());
    const tick = BigInt(tickOf(twitter, T0));
    expect(ids[0]).toBe((tick << 22n) | (1023n << 12n));
    expect(ids[4095]).toBe((tick << 22n) | (1023n << 12n) | 4095n);
    expect(gen.decompose(ids[4096]!)).toMatchObject({ time: Number(tick) + 1, sequence: 0, machine: 1023 });
    expect(clock.sleeps).toEqual([1]);
    assertIncreasing(ids);
  });
});

describe('options', () => {
  it('rejects a machine ID that does not fit the layout at construction, instead of spilling into the sequence', () => {
    for (const machineId of [65_536, 70_000, -1, 1.5, Number.NaN, '3' as unknown as number]) {
      expect(() => generator(new FakeClock(T0), { machineId })).toThrow(InvalidMachineIdError);
    }
    const { claim } = claimOf(65_536);
    expect(
      () => new IdGenerator(checkGeneratorOptions({ layout, machineId: claim, clock: new FakeClock(T0) })),
    ).toThrow(/0 to 65535 \(16 bits\), received 65536/);
  });

  it('rejects a bad clock and a bad bound at construction', () => {
    expect(() => generator({ now: 'soon' } as unknown as Clock)).toThrow(
      /clock: expected an object with a now\(\) method/,
    );
    expect(() => generator({ now: () => Number.NaN })).toThrow(/clock.now\(\): expected finite/);
    expect(() => generator(new FakeClock(T0), { maxClockBackwardMs: -1 })).toThrow(InvalidArgumentError);
    expect(() => generator(new FakeClock(T0), { randomSequenceBound: 257 })).toThrow(
      /randomSequenceBound \(0 = off\): expected an integer from 0 to 256, received 257/,
    );
  });

  it('with randomSequenceBound, starts each fresh tick below the bound', () => {
    const clock = new FakeClock(T0);
    const gen = generator(clock, { randomSequenceBound: 100 });
    const starts = new Set<number>();
    for (let tick = 0; tick < 300; tick++) {
      clock.set(T0 + tick * 10);
      starts.add(gen.decompose(gen.nextIdSync()).sequence);
    }
    expect(Math.max(...starts)).toBeLessThan(100);
    expect(starts.size).toBeGreaterThan(50);
  });
});

describe('claims', () => {
  it('fences: once the claim is lost, calls fail with MachineIdLostError', async () => {
    const { claim, controller } = claimOf(9);
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: claim, clock: new FakeClock(T0) }),
    );
    expect(gen.machine).toBe(9);
    gen.nextIdSync();
    controller.abort(new Error('keepalive failed'));
    expect(() => gen.nextIdSync()).toThrow(MachineIdLostError);
    expect(() => gen.nextIdSync()).toThrow(/machine ID 9 is no longer held: keepalive failed/);
    await expect(gen.nextId()).rejects.toThrow(MachineIdLostError);
  });

  it('an ID waiting for its tick is not handed out if the claim is lost meanwhile', async () => {
    const { claim, controller } = claimOf(9);
    const clock = new FakeClock(T0);
    const gen = new IdGenerator(
      checkGeneratorOptions({
        layout,
        machineId: claim,
        clock: {
          now: () => clock.now(),
          sleep: (ms) => {
            controller.abort();
            return clock.sleep(ms);
          },
        },
      }),
    );
    await gen.nextIds(256);
    await expect(gen.nextId()).rejects.toThrow(MachineIdLostError);
  });

  it.each([
    ['fences a busy thread at once', false],
    // Found held 1 ms before the deadline, then paused for 5 s (a SIGSTOP) before the ID is
    // made: were the clock read after the check, the ID would be dated 5 s past the deadline,
    // in ticks the claim's successor issues in.
    ['cannot date an ID past the deadline when the thread pauses right after the check', true],
  ])('asks verify() before each ID, so a claim that lapsed by time %s', (_, pause) => {
    const clock = new FakeClock(T0);
    const lapseAt = T0 + 35;
    const holder = claimOf(9, {
      // What a lease-backed claim does: past its deadline it aborts its own signal, synchronously.
      verify: () => {
        if (clock.now() >= lapseAt) holder.controller.abort(new Error('lease deadline passed'));
        else if (pause && clock.now() === lapseAt - 1) clock.advance(5000);
      },
    });
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: holder.claim, clock }));
    const issued: bigint[] = [];
    // A loop that never yields: no timer or abort listener from elsewhere could run here.
    expect(() => {
      for (let i = 0; i < 1000; i++) {
        issued.push(gen.nextIdSync());
        if (clock.now() < lapseAt) clock.advance(1);
      }
    }).toThrow(/machine ID 9 is no longer held: lease deadline passed/);
    expect(issued).toHaveLength(35);
    expect(Math.max(...issued.map((id) => tickStartMs(layout, gen.decompose(id).time)))).toBeLessThan(
      lapseAt,
    );
  });

  it('1,000 concurrent callers: a pause right after a passing check dates no ID past the deadline', async () => {
    const clock = new FakeClock(T0);
    const lapseAt = T0 + 25; // in the third tick (10 ms ticks, 256 IDs each)
    let paused = false;
    const holder = claimOf(9, {
      verify: () => {
        if (clock.now() >= lapseAt) holder.controller.abort(new Error('lease deadline passed'));
        else if (!paused && clock.now() >= T0 + 20) {
          // Held at the third tick's first check, then paused for 5 s before the ID is dated.
          paused = true;
          clock.advance(5000);
        }
      },
    });
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: holder.claim, clock }));
    const settled = await Promise.allSettled(Array.from({ length: 1000 }, () => gen.nextId()));
    expect(paused).toBe(true);
    const issued = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    // Two whole ticks and the one slot whose check passed before the pause; the rest refused.
    expect(issued).toHaveLength(513);
    assertIncreasing(issued);
    expect(Math.max(...issued.map((id) => tickStartMs(layout, gen.decompose(id).time)))).toBeLessThan(
      lapseAt,
    );
    expect(refused).toHaveLength(487);
    for (const error of refused) expect(error).toBeInstanceOf(MachineIdLostError);
  });

  it('resumes under the renewed claim, possibly another ID, without reissuing', async () => {
    const second = claimOf(12);
    const first = claimOf(9, { renew: () => Promise.resolve(second.claim) });
    const clock = new FakeClock(T0);
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: first.claim, clock }));
    const before = gen.nextIdSync();
    first.controller.abort();
    expect(() => gen.nextIdSync()).toThrow(MachineIdLostError);
    await Promise.resolve();
    await Promise.resolve();
    const after = gen.nextIdSync();
    expect(gen.machine).toBe(12);
    expect(gen.decompose(after).machine).toBe(12);
    expect(after).toBeGreaterThan(before);
  });

  it('over the time limit: keeps failing when the clock reads lower, and the claim records the last tick used, not the limit', async () => {
    const { claim, recorded } = claimOf(3);
    const clock = new FakeClock(T0);
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: claim, clock }));
    const id = gen.nextIdSync();
    clock.set(tickStartMs(layout, 2 ** 39) + 5);
    expect(() => gen.nextIdSync()).toThrow(OverTimeLimitError);
    clock.set(T0 + 20);
    expect(() => gen.nextIdSync()).toThrow(OverTimeLimitError);
    await expect(gen.nextId()).rejects.toThrow(OverTimeLimitError);
    await gen.close();
    expect(recorded).toEqual([tickStartMs(layout, gen.decompose(id).time + 1) - 1]);
  });

  it('honours notBefore: no ID for a tick at or before the recorded instant', () => {
    const recordedTick = tickOf(layout, T0) + 50;
    const notBefore = tickStartMs(layout, recordedTick + 1) - 1;
    const { claim } = claimOf(3, { notBefore });
    const clock = new FakeClock(T0); // the restarted process's clock is 500 ms behind the record
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: claim, clock }));
    const id = gen.nextIdSync();
    expect(gen.decompose(id).time).toBe(recordedTick + 1);
    expect(clock.sleeps).toEqual([510]);
  });

  it('a restart after kill -9 with the clock behind waits out the recorded horizon (notBeforeLeadMs) instead of failing', async () => {
    // The previous holder recorded 900 ms ahead of its clock; this process's clock is 300 ms behind it.
    const notBefore = T0 + 900 + 300;
    const bare = new IdGenerator(
      checkGeneratorOptions({
        layout,
        machineId: claimOf(3, { notBefore }).claim,
        clock: new FakeClock(T0),
      }),
    );
    expect(() => bare.nextIdSync()).toThrow(ClockMovedBackwardsError);
    for (const call of ['sync', 'async'] as const) {
      const clock = new FakeClock(T0);
      const { claim } = claimOf(3, { notBefore, notBeforeLeadMs: 900 });
      const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: claim, clock }));
      const id = call === 'sync' ? gen.nextIdSync() : await gen.nextId();
      expect(gen.decompose(id).time).toBe(tickOf(layout, notBefore) + 1);
      expect(clock.now()).toBeGreaterThanOrEqual(gen.toTime(id).getTime());
      expect(clock.sleeps).toEqual([1210]);
      // Past the horizon, the ordinary bound applies again.
      const more = await gen.nextIds(1000);
      expect(more).toHaveLength(1000);
    }
    // Still bounded: a clock behind by more than the horizon plus maxClockBackwardMs fails.
    const far = claimOf(3, { notBefore: T0 + 900 + 1500, notBeforeLeadMs: 900 });
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: far.claim, clock: new FakeClock(T0) }),
    );
    expect(() => gen.nextIdSync()).toThrow(ClockMovedBackwardsError);
    expect(
      () =>
        new IdGenerator(
          checkGeneratorOptions({ layout, machineId: claimOf(3, { notBefore, notBeforeLeadMs: -1 }).claim }),
        ),
    ).toThrow(/notBeforeLeadMs: expected a finite number of ms, 0 or more, received -1/);
  });

  it('with the clock behind notBefore by more than the bound, fails instead of issuing', () => {
    const { claim } = claimOf(3, { notBefore: T0 + 60_000 });
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: claim, clock: new FakeClock(T0) }),
    );
    expect(() => gen.nextIdSync()).toThrow(ClockMovedBackwardsError);
  });

  it('close() records the last millisecond of the last tick used, then releases; later calls fail', async () => {
    const { claim, recorded } = claimOf(3);
    const clock = new FakeClock(T0 + 4);
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: claim, clock }));
    gen.nextIdSync();
    await gen.close();
    expect(recorded).toEqual([T0 + 9]);
    expect(claim.release).toHaveBeenCalledTimes(1);
    expect(() => gen.nextIdSync()).toThrow(GeneratorClosedError);
    await gen.close();
    expect(claim.release).toHaveBeenCalledTimes(1);
  });

  it('records periodically while IDs are issued', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { claim, recorded } = claimOf(3, { recordIntervalMs: 100 });
      const clock = new FakeClock(T0);
      const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: claim, clock }));
      gen.nextIdSync();
      await vi.advanceTimersByTimeAsync(100);
      clock.advance(20);
      gen.nextIdSync();
      await vi.advanceTimersByTimeAsync(100);
      // Nothing new since the last record: no write.
      await vi.advanceTimersByTimeAsync(100);
      expect(recorded).toEqual([T0 + 9, T0 + 29]);
      await gen.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a failing record through onError instead of swallowing it', async () => {
    const onError = vi.fn();
    const failure = new Error('disk full');
    const { claim } = claimOf(3, {
      record: () => {
        throw failure;
      },
    });
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: claim, clock: new FakeClock(T0), onError }),
    );
    gen.nextIdSync();
    await gen.close();
    expect(onError).toHaveBeenCalledWith(failure);
  });
});
