import {
  AsyncSettingError,
  formatId,
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidBitsTimeError,
  InvalidStartTimeError,
  InvalidTimeUnitError,
  idReplacer,
  type MachineIdClaim,
  MachineIdRejectedError,
  parseId,
  StartTimeAheadError,
} from '@ids/engine';
import { lower16BitPrivateIP, NoPrivateAddressError } from '@ids/machine-ip';
import { describe, expect, it, vi } from 'vitest';
import {
  type BadInput,
  badStartTimes,
  eachThrows,
  itHoldsClaimUntilClose,
  saturate,
  takeInOrder,
} from '../../engine/test/kit.js';
import {
  ClockMovedBackwardsError,
  createSharedState,
  FakeClock,
  GO_V2_START_TIME,
  IdsError,
  InvalidIdError,
  InvalidMachineIdError,
  MachineIdProviderError,
  SONYFLAKE_LAYOUT,
  SONYFLAKE_V2_LAYOUT,
  Sonyflake,
  type SonyflakeSettings,
  sharedStateCell,
  sonyflakeLayout,
  toTime,
} from '../src/index.js';
import { DEFAULT_START_TIME } from '../src/settings.js';
import { runningClock } from './helpers.js';

const NOW = Date.UTC(2026, 10, 22, 12);

describe('defaults', () => {
  it('start time 2014-09-01 by default; Go v2 2025-01-01 as a named constant', () => {
    expect(new Date(DEFAULT_START_TIME).toISOString()).toBe('2014-09-01T00:00:00.000Z');
    expect(new Date(GO_V2_START_TIME).toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(SONYFLAKE_LAYOUT.epochMs).toBe(1_409_529_600_000);
    expect(SONYFLAKE_V2_LAYOUT.epochMs).toBe(1_735_689_600_000);
    expect(new Sonyflake({ machineId: 1 }).layout.epochMs).toBe(DEFAULT_START_TIME);
  });

  it('the default machine ID is the private IPv4 rule, and its failure says so', () => {
    // This host may or may not have a private address; either way the constructor must agree with the rule.
    vi.stubEnv('IDS_MACHINE_ID', undefined);
    let expected: number | Error;
    try {
      expected = lower16BitPrivateIP();
    } catch (error) {
      expected = error as Error;
    }
    if (typeof expected === 'number') {
      expect(new Sonyflake().machine).toBe(expected);
    } else {
      expect(() => new Sonyflake()).toThrow(MachineIdProviderError);
      try {
        new Sonyflake();
      } catch (error) {
        expect((error as Error).cause).toBeInstanceOf(NoPrivateAddressError);
        expect((error as Error).message).toMatch(/no private ip address/);
      }
    }
    vi.unstubAllEnvs();
  });
});

describe('construction', () => {
  it('is synchronous with a numeric machine ID or a synchronous provider', () => {
    expect(new Sonyflake({ machineId: 42 }).machine).toBe(42);
    expect(new Sonyflake({ machineId: ({ bits }) => bits }).machine).toBe(16);
  });

  it('refuses asynchronous providers and checks on the synchronous path, pointing at create()', () => {
    expect(() => new Sonyflake({ machineId: async () => 1 })).toThrow(AsyncSettingError);
    expect(() => new Sonyflake({ machineId: 1, checkMachineId: async () => true })).toThrow(
      /use the async create\(\)/,
    );
  });

  it('create() runs asynchronous providers and checks, in that order, telling the provider the bit width', async () => {
    const calls: string[] = [];
    const sf = await Sonyflake.create({
      bitsMachineId: 10,
      machineId: async ({ bits }) => {
        calls.push(`provider(${bits})`);
        return 1000;
      },
      checkMachineId: async (id) => {
        calls.push(`check(${id})`);
        return true;
      },
    });
    expect(calls).toEqual(['provider(10)', 'check(1000)']);
    expect(sf.machine).toBe(1000);
  });

  it('a check that throws is a rejection whose cause is the error', async () => {
    const boom = new Error('registry down');
    await expect(
      Sonyflake.create({
        machineId: 1,
        checkMachineId: () => {
          throw boom;
        },
      }),
    ).rejects.toMatchObject({ code: 'ERR_IDS_MACHINE_ID_REJECTED', cause: boom });
  });

  it('a claim whose ID is refused is released', async () => {
    const release = vi.fn();
    const claim: MachineIdClaim = { machineId: 5, release };
    await expect(Sonyflake.create({ machineId: () => claim, checkMachineId: () => false })).rejects.toThrow(
      MachineIdRejectedError,
    );
    expect(release).toHaveBeenCalledTimes(1);
    const tooBig: MachineIdClaim = { machineId: 70_000, release };
    await expect(Sonyflake.create({ machineId: async () => tooBig })).rejects.toThrow(InvalidMachineIdError);
    expect(release).toHaveBeenCalledTimes(2);
  });

  itHoldsClaimUntilClose(
    'a claim from create() is held by the generator and released by close()',
    (machineId) => Sonyflake.create({ machineId }),
    77,
  );
});

describe('bad settings get the typed error that names what was expected and received', () => {
  const clock = new FakeClock(NOW);
  const cases: BadInput<SonyflakeSettings>[] = [
    [
      'negative sequence bits',
      { bitsSequence: -3 },
      InvalidBitsSequenceError,
      /0 to 30, received -3 \(number\)/,
    ],
    ['fractional sequence bits', { bitsSequence: 7.5 }, InvalidBitsSequenceError, /received 7.5/],
    ['fractional machine bits', { bitsMachineId: 0.5 }, InvalidBitsMachineIdError, /received 0.5/],
    ['bits summing past 63', { bitsSequence: 20, bitsMachineId: 20 }, InvalidBitsTimeError, /leaves 23/],
    ['a time unit under 1 ms', { timeUnit: 0.5 }, InvalidTimeUnitError, /received 0.5/],
    ['a negative time unit', { timeUnit: -10 }, InvalidTimeUnitError, /received -10/],
    ...badStartTimes('startTime', NOW, { StartTimeAheadError, InvalidStartTimeError }),
    [
      'a machine ID out of range',
      { machineId: 65_536 },
      InvalidMachineIdError,
      /0 to 65535 \(16 bits\), received 65536/,
    ],
    ['a fractional machine ID', { machineId: 1.5 }, InvalidMachineIdError, /received 1.5/],
    [
      'a machine ID as a string',
      { machineId: '7' as never },
      IdsError,
      /expected a number, a claim or a provider/,
    ],
  ];

  eachThrows('%s', cases, (settings) => new Sonyflake({ machineId: 1, clock, ...settings }));

  it('a provider that rejects: the rejection is the cause', async () => {
    const reason = new Error('metadata service timed out');
    await expect(Sonyflake.create({ machineId: () => Promise.reject(reason) })).rejects.toMatchObject({
      name: 'MachineIdProviderError',
      cause: reason,
    });
  });
});

describe('IDs in and out', () => {
  const sf = new Sonyflake({ machineId: 3, clock: new FakeClock(NOW) });

  it('IDs are bigints; helpers accept bigints and decimal strings, never numbers', () => {
    const id = sf.nextIdSync();
    expect(typeof id).toBe('bigint');
    expect(sf.decompose(id.toString())).toEqual(sf.decompose(id));
    expect(() => sf.decompose(Number(id) as never)).toThrow(InvalidIdError);
    expect(() => sf.toTime('-1')).toThrow(InvalidIdError);
    expect(() => sf.toTime(2n ** 63n)).toThrow(/from 0 to 2\^63 - 1/);
    expect(() => sf.machineId('12ab')).toThrow(/decimal string/);
  });

  it('string and JSON helpers', () => {
    const id = sf.nextIdSync();
    expect(parseId(formatId(id))).toBe(id);
    expect(JSON.parse(JSON.stringify({ id }, idReplacer))).toEqual({ id: id.toString() });
    expect(toTime(id).getTime()).toBe(sf.toTime(id).getTime());
  });
});

describe('a start time before 1970 that is not a whole number of units', () => {
  // Go computes both sides with UnixNano() / timeUnit, which truncates toward zero: the start
  // 1969-12-31T23:59:59.995Z is internal time 0 (floored it would be -1), so the instant
  // 1970-01-01T00:00:01Z is tick 100 (not 101) and tick 100 is that instant again.
  const startTime = new Date('1969-12-31T23:59:59.995Z');
  const at = Date.parse('1970-01-01T00:00:01.000Z');

  it("issues Go's tick and gives Go's toTime", () => {
    const clock = new FakeClock(at);
    const sf = new Sonyflake({ startTime, clock, machineId: 1 });
    const id = sf.nextIdSync();
    expect(sf.decompose(id)).toMatchObject({ time: 100, sequence: 0, machine: 1 });
    expect(id).toBe((100n << 24n) | 1n);
    expect(sf.toTime(id).toISOString()).toBe('1970-01-01T00:00:01.000Z');
    expect(sf.compose(at, 0, 1)).toBe(id);
    // Between the ticks: 1970-01-01T00:00:01.005Z is still tick 100.
    expect(sf.toTime(sf.compose(at + 5, 3, 1)).toISOString()).toBe('1970-01-01T00:00:01.000Z');
  });
});

describe('a clock that steps back', () => {
  it('never yields a duplicate, and a step past the bound is a typed error instead of a hang', async () => {
    const clock = new FakeClock(NOW);
    const sf = new Sonyflake({ machineId: 1, clock, maxClockBackwardMs: 2000 });
    const ids = new Set<bigint>();
    for (let i = 0; i < 600; i++) ids.add(await sf.nextId());
    clock.set(NOW - 1500); // within the bound: waits, no duplicate
    for (let i = 0; i < 600; i++) ids.add(await sf.nextId());
    expect(ids.size).toBe(1200);
    clock.set(NOW - 3_600_000); // an hour back: fails at once (an ID of the frozen tick would be an hour ahead of the clock)
    let failure: unknown;
    for (let i = 0; i < 300 && failure === undefined; i++) {
      await sf.nextId().then(
        (id) => ids.add(id),
        (error) => (failure = error),
      );
    }
    expect(failure).toBeInstanceOf(ClockMovedBackwardsError);
    expect(ids.size).toBe(1200);
  });
});

describe('random sequence start (randomSequenceBound)', () => {
  it('starts each tick the clock opens below the bound; off by default, as in Go', () => {
    const clock = new FakeClock(NOW);
    const random = new Sonyflake({ machineId: 1, clock, randomSequenceBound: 100 });
    const plain = new Sonyflake({ machineId: 2, clock });
    const starts = new Set<number>();
    for (let tick = 0; tick < 300; tick++) {
      clock.set(NOW + tick * 10);
      starts.add(random.decompose(random.nextIdSync()).sequence);
      expect(plain.decompose(plain.nextIdSync()).sequence).toBe(0);
    }
    expect(Math.max(...starts)).toBeLessThan(100);
    expect(starts.size).toBeGreaterThan(50);
  });

  it('costs the opened tick its first r of 256 slots; a tick reached by rolling over keeps all 256', () => {
    const clock = new FakeClock(NOW);
    const sf = new Sonyflake({ machineId: 1, clock, randomSequenceBound: 100 });
    const first = sf.nextIdSync();
    const { time, sequence } = sf.decompose(first);
    let inTick = 1;
    let id = sf.nextIdSync();
    for (; sf.decompose(id).time === time; id = sf.nextIdSync()) inTick++;
    expect(inTick).toBe(256 - sequence);
    expect(sf.decompose(id)).toMatchObject({ time: time + 1, sequence: 0 });
    expect(() => new Sonyflake({ machineId: 1, clock, randomSequenceBound: 257 })).toThrow(
      /randomSequenceBound \(0 = off\): expected an integer from 0 to 256, received 257/,
    );
  });
});

describe('volume', () => {
  it('1,000,000 IDs are strictly increasing and unique', () => {
    const sf = new Sonyflake({ machineId: 5, clock: runningClock(NOW, 0.01) });
    expect(takeInOrder(() => sf.nextIdSync(), 1_000_000)).toEqual({ increasing: true, distinct: 1_000_000 });
  });
});

describe('the event loop', () => {
  // The real event loop, measured in this process's CPU time (see saturate). A busy-waiting generator would
  // starve the 1 ms interval for the whole run; ours waits for the next tick with a timer.
  it('keeps turning while nextId() is saturated', async () => {
    const sf = new Sonyflake({ machineId: 9 });
    const ids = new Set<bigint>();
    // 100 ms of CPU and 10,000 IDs at the least: at 25,600/s that is 0.4 s or more of waiting on
    // ticks, and the interval should have beaten dozens of times meanwhile.
    const { beats, longestGap } = await saturate(async () => ids.add(await sf.nextId()), 100, 10_000);
    expect(ids.size).toBeGreaterThan(5000);
    expect(beats).toBeGreaterThan(40);
    expect(longestGap).toBeLessThan(100);
  });
});

describe('a state shared by threads', () => {
  // One thread's view here; test/threads.test.ts runs real worker threads on the built packages.
  it('passes `state` to the engine: generators on one shared state take distinct slots', () => {
    const clock = new FakeClock(NOW);
    const shared = createSharedState(sonyflakeLayout({ clock }), 12);
    const a = new Sonyflake({ clock, machineId: 12, state: sharedStateCell(shared) });
    const b = new Sonyflake({
      clock,
      machineId: sharedStateCell(shared).machineId,
      state: sharedStateCell(shared),
    });
    const ids = [a.nextIdSync(), b.nextIdSync(), a.nextIdSync(), b.nextIdSync()];
    // Each generator reserves 16 slots per commit on the shared word, and hands them out in turn.
    expect(ids.map((id) => a.decompose(id).sequence)).toEqual([0, 16, 1, 17]);
    expect(() => new Sonyflake({ clock, machineId: 13, state: sharedStateCell(shared) })).toThrow(
      /belongs to machine ID 12, received a generator for machine ID 13/,
    );
    expect(
      () => new Sonyflake({ clock, timeUnit: 1, machineId: 12, state: sharedStateCell(shared) }),
    ).toThrow(/created for time 39 bits of 10 ms/);
  });
});
