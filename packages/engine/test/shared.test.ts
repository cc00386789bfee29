import { describe, expect, it, vi } from 'vitest';
import { type Clock, FakeClock } from '../src/clock.js';
import {
  GeneratorClosedError,
  InvalidArgumentError,
  InvalidMachineIdError,
  MachineIdLostError,
  OverTimeLimitError,
} from '../src/errors.js';
import {
  checkGeneratorOptions,
  type GeneratorOptions,
  IdGenerator,
  type StateCell,
} from '../src/generator.js';
import { defineLayout, tickOf, tickStartMs } from '../src/layout.js';
import type { MachineIdClaim } from '../src/machine.js';
import {
  createSharedState,
  type SharedGeneratorState,
  SharedStateCell,
  sharedStateCell,
} from '../src/shared.js';
import { claimOf } from './claims.js';
import { SONYFLAKE_SPEC } from './layouts.js';

// Worker threads are exercised in test/threads.test.ts against the built packages; here the
// cell's rules are checked in one thread, with races forced at the seam between load and commit.

const layout = defineLayout(SONYFLAKE_SPEC);
const T0 = Date.UTC(2026, 10, 22, 12);

/** A generator of `machineId` (a number, or the holder's claim) taking its slots from `shared`. */
function onShared(
  shared: SharedGeneratorState,
  machineId: number | MachineIdClaim,
  clock?: Clock,
  extra: Partial<GeneratorOptions> = {},
): IdGenerator {
  return new IdGenerator(
    checkGeneratorOptions({ layout, machineId, clock, state: sharedStateCell(shared), ...extra }),
  );
}

describe('shared state cell', () => {
  it('gives generators on one state distinct slots, 256 per tick, each generator increasing', () => {
    const shared = createSharedState(layout, 5);
    const clock = new FakeClock(T0);
    const gens = [0, 1, 2].map(() => onShared(shared, 5, clock));
    const perGen: bigint[][] = [[], [], []];
    for (let i = 0; i < 3 * 256; i++) perGen[i % 3]!.push(gens[i % 3]!.nextIdSync());
    const all = perGen.flat();
    expect(new Set(all).size).toBe(all.length);
    for (const ids of perGen) expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    const ticks = new Map<number, number>();
    for (const id of all) {
      const { time } = gens[0]!.decompose(id);
      ticks.set(time, (ticks.get(time) ?? 0) + 1);
    }
    expect([...ticks.values()]).toEqual([256, 256, 256]);
    // Two roll-overs, each waited out by whichever generator took the tick's first slot.
    expect(clock.sleeps).toEqual([10, 10]);
  });

  it('once one generator on the state is over the time limit, every one is, whatever its clock reads', async () => {
    const shared = createSharedState(layout, 5);
    const clock = new FakeClock(T0);
    const [a, b] = [0, 1].map(() => onShared(shared, 5, clock)) as [IdGenerator, IdGenerator];
    a.nextIdSync();
    b.nextIdSync(); // each holds slots reserved in this tick
    clock.set(tickStartMs(layout, 2 ** 39));
    // a hands out what it reserved before the clock jumped, then reads the clock: over the limit.
    let served = 0;
    expect(() => {
      for (; served <= 64; served++) a.nextIdSync();
    }).toThrow(OverTimeLimitError);
    expect(served).toBeLessThan(64);
    clock.set(T0);
    expect(() => a.nextIdSync()).toThrow(OverTimeLimitError);
    expect(() => b.nextIdSync()).toThrow(OverTimeLimitError);
    await Promise.all([a.close(), b.close()]);
  });

  it('retries when another thread committed between its load and its commit', () => {
    const shared = createSharedState(layout, 5);
    const clock = new FakeClock(T0);
    // Three other threads, each reserving its batch of 16 slots in one commit.
    const others = [0, 1, 2].map(() => onShared(shared, 5, clock));
    const inner = sharedStateCell(shared);
    expect(inner.reservation).toBe(16);
    let races = 0;
    const racing: StateCell = {
      load: () => {
        const state = inner.load();
        // Another thread takes a slot after this load: this commit must fail and retry.
        if (races < 3) others[races++]!.nextIdSync();
        return state;
      },
      commit: (prev, next) => inner.commit(prev, next),
    };
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: 5, clock, state: racing }));
    const id = gen.nextIdSync();
    expect(races).toBe(3);
    expect(gen.decompose(id).sequence).toBe(48);
    // A cell without `reservation` is taken one slot per commit.
    expect(inner.load()).toEqual({ tick: tickOf(layout, T0), sequence: 48 });
  });

  it('a thread that keeps losing each new tick to others waits on, with no ClockStalledError, while the clock advances', () => {
    const shared = createSharedState(layout, 5);
    const clock = new FakeClock(T0);
    const other = onShared(shared, 5, clock);
    let lost = 0;
    const starved = onShared(shared, 5, {
      now: () => clock.now(),
      // While this thread sleeps to the next tick, another thread takes all of it (for 2 s).
      sleepSync: (ms) => {
        clock.sleepSync(ms);
        if (lost++ < 200) for (let i = 0; i < 256; i++) other.nextIdSync();
      },
    });
    for (let i = 0; i < 256; i++) other.nextIdSync();
    const id = starved.nextIdSync();
    expect(lost).toBe(201);
    expect(starved.decompose(id).time).toBe(tickOf(layout, T0) + 201);
  });

  it("starts after the claim's notBefore, before any generator is built", () => {
    const notBefore = T0 + 95;
    const { claim } = claimOf(4, { notBefore });
    const shared = createSharedState(layout, claim);
    const clock = new FakeClock(T0);
    const cell = sharedStateCell(shared);
    expect(cell.machineId).toBe(4);
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: cell.machineId, clock, state: cell }),
    );
    expect(gen.decompose(gen.nextIdSync()).time).toBe(tickOf(layout, notBefore) + 1);
  });

  it('closing the holder fences the other generators; the record covers their last slot', async () => {
    const { claim, recorded } = claimOf(6);
    const shared = createSharedState(layout, claim);
    const clock = new FakeClock(T0);
    const holder = onShared(shared, claim, clock);
    const worker = onShared(shared, 6, clock);
    clock.advance(35);
    const last = worker.nextIdSync();
    await holder.close();
    expect(() => worker.nextIdSync()).toThrow(GeneratorClosedError);
    expect(() => worker.nextIdSync()).toThrow(/machine ID 6 for this shared state was closed/);
    expect(recorded).toEqual([tickStartMs(layout, worker.decompose(last).time + 1) - 1]);
    expect(claim.release).toHaveBeenCalledTimes(1);
    expect(sharedStateCell(shared).fenced).toBe(true);
  });

  it('a taker that loaded before the fence cannot commit after it', async () => {
    const { claim, recorded } = claimOf(6);
    const shared = createSharedState(layout, claim);
    const clock = new FakeClock(T0);
    const holder = onShared(shared, claim, clock);
    const inner = sharedStateCell(shared);
    let closing: Promise<void> | undefined;
    const racing: StateCell = {
      load: () => {
        const state = inner.load();
        closing = holder.close(); // fences synchronously, then records
        return state;
      },
      commit: (prev, next) => inner.commit(prev, next),
      attach: (l, m) => inner.attach(l, m),
    };
    const worker = new IdGenerator(checkGeneratorOptions({ layout, machineId: 6, clock, state: racing }));
    expect(() => worker.nextIdSync()).toThrow(GeneratorClosedError);
    await closing;
    // Nothing was issued: the record is the state the holder started from (tick 0).
    expect(recorded).toEqual([tickStartMs(layout, 1) - 1]);
    expect(inner.load()).toEqual({ tick: 0, sequence: 255 });
  });

  /**
   * A holder whose lease is confirmed until `deadline` (T0 + 3 s) and whose keepalives stopped
   * (its thread is blocked), and a worker on its shared state (through `wrap`, if given) issuing
   * 1 ms apart until it is refused. No timer runs in that loop: only what the worker reads from
   * the shared buffer can stop it.
   */
  function workerToDeadline(
    wrap?: (inner: SharedStateCell, clock: FakeClock, deadline: number) => StateCell,
  ) {
    const clock = new FakeClock(T0);
    const deadline = T0 + 3000;
    const { claim } = claimOf(6, { trustedForMs: () => Math.max(0, deadline - clock.now()) });
    const shared = createSharedState(layout, claim);
    onShared(shared, claim, clock);
    const inner = sharedStateCell(shared);
    expect(inner.trustedUntil).toBe(deadline);
    const state = wrap ? wrap(inner, clock, deadline) : inner;
    const worker = new IdGenerator(checkGeneratorOptions({ layout, machineId: 6, clock, state }));
    const issued: bigint[] = [];
    expect(() => {
      for (let i = 0; i < 10_000; i++) {
        issued.push(worker.nextIdSync());
        clock.advance(1);
      }
    }).toThrow(/machine ID 6 of this shared state is not known to be held at .*trusted until/);
    const lastStart = Math.max(...issued.map((id) => tickStartMs(layout, worker.decompose(id).time)));
    expect(lastStart).toBeLessThan(deadline);
    return { clock, deadline, issued, worker };
  }

  it("fences every thread at the holder claim's trust deadline, though the holder's thread never noticed it lapse", () => {
    const { clock, deadline, issued, worker } = workerToDeadline();
    expect(issued.length).toBeGreaterThan(2900);
    expect(clock.now()).toBe(deadline);
    // Slots it had reserved are refused too.
    expect(() => worker.nextIdSync()).toThrow(MachineIdLostError);
  });

  it("a worker paused between its checks and the reading that dates its slots issues nothing past the holder's trust deadline", () => {
    let paused = false;
    workerToDeadline((inner, clock, deadline) => ({
      load: () => {
        // 1 ms before the deadline the thread is descheduled for 5 s after its checks passed.
        if (!paused && clock.now() === deadline - 1) {
          paused = true;
          clock.advance(5000);
        }
        return inner.load();
      },
      commit: (prev, next) => inner.commit(prev, next),
      attach: (l, m) => inner.attach(l, m),
      check: (nowMs) => inner.check(nowMs),
    }));
    expect(paused).toBe(true);
  });

  it('a trust counted in whole ms (Date.now) is not stretched past its deadline by a sub-ms clock', () => {
    // The generator's clock reads 0.7 ms into a millisecond; the claim counts on the floored
    // clock, as Date.now() does, so it says 3000 ms where only 2999.3 are left.
    const clock = new FakeClock(T0 + 0.7);
    const deadline = T0 + 3000;
    const { claim } = claimOf(6, { trustedForMs: () => deadline - Math.floor(clock.now()) });
    const shared = createSharedState(layout, claim);
    onShared(shared, claim, clock);
    expect(sharedStateCell(shared).trustedUntil).toBeLessThanOrEqual(deadline);
    const worker = onShared(shared, 6, clock);
    clock.advance(deadline - clock.now() + 0.3);
    expect(() => worker.nextIdSync()).toThrow(MachineIdLostError);
  });

  it('losing the claim fences the other generators with MachineIdLostError', () => {
    const { claim, controller } = claimOf(6);
    const shared = createSharedState(layout, claim);
    const clock = new FakeClock(T0);
    onShared(shared, claim, clock);
    const worker = onShared(shared, 6, clock);
    worker.nextIdSync();
    controller.abort(new Error('lease expired'));
    expect(() => worker.nextIdSync()).toThrow(MachineIdLostError);
    expect(() => worker.nextIdSync()).toThrow(/machine ID 6 of this shared state is no longer held/);
  });

  it('a renewed claim the holder cannot adopt (its shared state is fenced) is released and reported', async () => {
    const next = claimOf(7);
    const { claim, controller } = claimOf(6, { renew: () => Promise.resolve(next.claim) });
    const shared = createSharedState(layout, claim);
    const onError = vi.fn();
    const holder = onShared(shared, claim, new FakeClock(T0), { onError });
    controller.abort();
    await new Promise((resolve) => setImmediate(resolve));
    expect(next.claim.release).toHaveBeenCalledTimes(1);
    expect(onError).toHaveBeenCalledWith(
      expect.objectContaining({ message: expect.stringMatching(/belongs to machine ID 6/) }),
    );
    expect(() => holder.nextIdSync()).toThrow(MachineIdLostError);
  });

  it('refuses a generator of another layout or machine ID', () => {
    const shared = createSharedState(layout, 5);
    const other = defineLayout({ ...layout, timeUnitMs: 1 });
    expect(() => onShared(shared, 5, undefined, { layout: other })).toThrow(
      /created for time 39 bits of 10 ms .* this generator's layout has time 39 bits of 1 ms/,
    );
    expect(() => onShared(shared, 6)).toThrow(
      /belongs to machine ID 5, received a generator for machine ID 6/,
    );
  });

  it('rejects what is not a shared state, and machine IDs that do not fit', () => {
    expect(() => sharedStateCell({ buffer: new ArrayBuffer(80) as unknown as SharedArrayBuffer })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new SharedStateCell(null as never)).toThrow(
      /expected the object createSharedState returned/,
    );
    expect(() => sharedStateCell({ buffer: new SharedArrayBuffer(80) })).toThrow(/expected version 2/);
    expect(() => createSharedState(layout, 65_536)).toThrow(InvalidMachineIdError);
    expect(() => createSharedState({} as never, 1)).toThrow(/expected a layout from defineLayout/);
  });

  it('packs the full range of a 63-bit layout without touching the fence bit', () => {
    const wide = defineLayout({ timeBits: 41, timeUnitMs: 1, sequenceBits: 22, machineBits: 0, epochMs: 0 });
    const shared = createSharedState(wide, 0);
    const cell = sharedStateCell(shared);
    const top = { tick: 2 ** 41 - 1, sequence: 2 ** 22 - 1 };
    expect(cell.commit(cell.load(), top)).toBe(true);
    expect(cell.load()).toEqual(top);
    expect(cell.fenced).toBe(false);
  });
});
