import {
  AsyncSettingError,
  ENCODING_NAMES,
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidLayoutError,
  InvalidStartTimeError,
  layoutLimits,
  type MachineIdClaim,
  MachineIdRejectedError,
  StartTimeAheadError,
} from '@ids/engine';
import { decodeAnyId } from '@ids/engine/read';
import { describe, expect, it, vi } from 'vitest';
import {
  type BadInput,
  badStartTimes,
  eachThrows,
  itHoldsClaimUntilClose,
  runningClock,
  saturate,
  takeInOrder,
} from '../../engine/test/kit.js';
import { TWITTER_SPEC } from '../../engine/test/layouts.js';
import {
  ClockMovedBackwardsError,
  compose,
  createSharedState,
  DISCORD_LAYOUT,
  decodeId,
  decompose,
  encodeId,
  FakeClock,
  IdsError,
  InvalidArgumentError,
  InvalidMachineIdError,
  MachineIdRequiredError,
  Snowflake,
  type SnowflakeSettings,
  sharedStateCell,
  snowflakeLayout,
  TWITTER_LAYOUT,
  toTime,
} from '../src/index.js';
import { DISCORD_EPOCH, TWITTER_EPOCH } from '../src/presets.js';

const NOW = Date.UTC(2026, 10, 22, 12);

// Discord's developer documentation takes this ID apart: 2016-04-30T11:18:25.796Z, internal
// worker 1, internal process 0, increment 7.
const DISCORD_DOCS_ID = 175928847299117063n;
// bwmarrin/snowflake's TestParseBase32 vector, an ID of its default (Twitter) layout.
const BWMARRIN_BASE32_ID = 1427970479175499776n;

describe('presets', () => {
  it("twitter by default: 41-bit ms time, datacenter 5 + worker 5 above a 12-bit sequence, Twitter's epoch", () => {
    expect(new Date(TWITTER_EPOCH).toISOString()).toBe('2010-11-04T01:42:54.657Z');
    const sf = new Snowflake({ machineId: 1 });
    expect(sf.layout).toBe(TWITTER_LAYOUT);
    // The engine's tests' own description of Twitter's layout, name and epoch included.
    expect(TWITTER_LAYOUT).toMatchObject(TWITTER_SPEC);
    const limits = layoutLimits(TWITTER_LAYOUT);
    expect(limits.idsPerSecond).toBe(4_096_000);
    expect(limits.machines).toBe(1024);
    expect(Math.floor(limits.lifetimeYears)).toBe(69);
    expect(limits.endsAt.toISOString()).toBe('2080-07-10T17:30:30.209Z');
  });

  it("discord: the same bits from 2015, worker and process; takes apart the ID of Discord's docs", () => {
    expect(new Date(DISCORD_EPOCH).toISOString()).toBe('2015-01-01T00:00:00.000Z');
    const sf = new Snowflake({ preset: 'discord', machineId: 0 });
    expect(sf.layout).toBe(DISCORD_LAYOUT);
    expect(sf.decompose(DISCORD_DOCS_ID)).toMatchObject({
      sequence: 7,
      parts: { worker: 1, process: 0 },
    });
    expect(sf.toTime(DISCORD_DOCS_ID).toISOString()).toBe('2016-04-30T11:18:25.796Z');
    expect(layoutLimits(DISCORD_LAYOUT).endsAt.toISOString()).toBe('2084-09-06T15:47:35.552Z');
  });

  it('decompose shows datacenter and worker for the twitter layout', () => {
    const id = compose(TWITTER_EPOCH + 1000, 5, (3 << 5) | 17);
    expect(decompose(id)).toEqual({
      id,
      time: 1000,
      sequence: 5,
      machine: (3 << 5) | 17,
      parts: { datacenter: 3, worker: 17 },
    });
    expect(toTime(id).getTime()).toBe(TWITTER_EPOCH + 1000);
  });

  it('bwmarrin mode: nodeBits/stepBits give one node field, time gets the rest of 63 bits', () => {
    const defaults = snowflakeLayout({ nodeBits: 10 });
    expect(defaults).toMatchObject({ name: 'snowflake', timeBits: 41, sequenceBits: 12, machineBits: 10 });
    expect(defaults.machineParts).toBeUndefined();
    expect(defaults.epochMs).toBe(TWITTER_EPOCH);
    // bwmarrin's default layout has Twitter's bits: the same ID means the same fields.
    const a = new Snowflake({ nodeBits: 10, machineId: 1 }).decompose(BWMARRIN_BASE32_ID);
    const b = decompose(BWMARRIN_BASE32_ID);
    expect([a.time, a.machine, a.sequence]).toEqual([b.time, b.machine, b.sequence]);
    expect(snowflakeLayout({ nodeBits: 5, stepBits: 12 })).toMatchObject({ timeBits: 46, machineBits: 5 });
    expect(snowflakeLayout({ nodeBits: 0, stepBits: 22 })).toMatchObject({
      timeBits: 41,
      maxSequence: 2 ** 22 - 1,
    });
    // Fewer than 11 bits would give a time field that outlasts a JS Date: capped at 52 bits.
    expect(snowflakeLayout({ nodeBits: 0, stepBits: 0 }).timeBits).toBe(52);
  });

  it('a custom epoch for a preset or for node/step bits', () => {
    const epoch = Date.UTC(2024, 0, 1);
    const sf = new Snowflake({ epoch: new Date(epoch), machineParts: { datacenter: 1, worker: 2 } });
    expect(sf.layout.epochMs).toBe(epoch);
    expect(sf.layout.machineParts).toEqual(TWITTER_LAYOUT.machineParts);
    expect(snowflakeLayout({ nodeBits: 8, epoch }).epochMs).toBe(epoch);
  });
});

describe('machine IDs', () => {
  it('from machineParts, and the provider is told the field has 10 bits', () => {
    expect(new Snowflake({ machineParts: { datacenter: 1, worker: 7 } }).machine).toBe(39);
    expect(new Snowflake({ preset: 'discord', machineParts: { worker: 31, process: 31 } }).machine).toBe(
      1023,
    );
    const provider = vi.fn(({ bits }: { bits: number }) => bits);
    expect(new Snowflake({ machineId: provider }).machine).toBe(10);
    expect(new Snowflake({ nodeBits: 6, stepBits: 16, machineId: provider }).machine).toBe(6);
  });

  it('create() runs async providers and checks; a refused claim is released', async () => {
    const sf = await Snowflake.create({
      machineId: async () => 512,
      checkMachineId: async (id) => id === 512,
    });
    expect(sf.machine).toBe(512);
    const release = vi.fn();
    const claim: MachineIdClaim = { machineId: 3, release };
    await expect(
      Snowflake.create({ machineId: async () => claim, checkMachineId: () => false }),
    ).rejects.toThrow(MachineIdRejectedError);
    expect(release).toHaveBeenCalledTimes(1);
    expect(() => new Snowflake({ machineId: async () => 1 })).toThrow(AsyncSettingError);
  });

  itHoldsClaimUntilClose(
    'a claim from create() is held and released by close()',
    (machineId) => Snowflake.create({ machineId }),
    9,
  );

  it('has no default: a missing machine ID says what to give', async () => {
    expect(() => new Snowflake()).toThrow(MachineIdRequiredError);
    expect(() => new Snowflake()).toThrow(
      /expected machineId \(0 to 1023, a claim or a provider\) or machineParts \(datacenter and worker\)/,
    );
    await expect(Snowflake.create({})).rejects.toMatchObject({ code: 'ERR_IDS_MACHINE_ID_REQUIRED' });
    expect(new MachineIdRequiredError('x')).toBeInstanceOf(InvalidMachineIdError);
  });
});

describe('bad settings fail at construction with typed errors', () => {
  const clock = new FakeClock(NOW);
  const cases: BadInput<SnowflakeSettings>[] = [
    [
      'an unknown preset',
      { preset: 'instagram' as never },
      InvalidArgumentError,
      /'twitter' or 'discord', received "instagram"/,
    ],
    [
      'a preset with node bits',
      { preset: 'discord', nodeBits: 8 },
      InvalidArgumentError,
      /cannot be combined/,
    ],
    [
      'node + step past 22',
      { nodeBits: 12, stepBits: 12 },
      InvalidLayoutError,
      /<= 22, received 12 \+ 12 = 24/,
    ],
    ['node bits 23', { nodeBits: 23, stepBits: 0 }, InvalidBitsMachineIdError, /0 to 22, received 23/],
    ['fractional step bits', { stepBits: 1.5 }, InvalidBitsSequenceError, /received 1.5/],
    ['negative step bits', { stepBits: -1 }, InvalidBitsSequenceError, /received -1/],
    ...badStartTimes('epoch', NOW, { StartTimeAheadError, InvalidStartTimeError }),
    [
      'a datacenter of 32',
      { machineParts: { datacenter: 32, worker: 0 } },
      InvalidMachineIdError,
      /invalid datacenter ID: expected an integer from 0 to 31/,
    ],
    [
      'a worker of -1',
      { machineParts: { datacenter: 0, worker: -1 } },
      InvalidMachineIdError,
      /invalid worker ID/,
    ],
    [
      'a machine ID past 10 bits',
      { machineId: 1024 },
      InvalidMachineIdError,
      /0 to 1023 \(10 bits\), received 1024/,
    ],
    [
      'a machine ID past custom node bits',
      { nodeBits: 4, machineId: 16 },
      InvalidMachineIdError,
      /0 to 15 \(4 bits\)/,
    ],
    [
      'machineId and machineParts',
      { machineId: 1, machineParts: { datacenter: 0, worker: 1 } },
      InvalidArgumentError,
      /not both/,
    ],
    [
      'machine parts for a node layout',
      { nodeBits: 10, machineParts: { node: 1 } },
      InvalidArgumentError,
      /one machine field/,
    ],
    [
      'a random bound past 4096',
      { machineId: 1, randomSequenceBound: 4097 },
      InvalidArgumentError,
      /randomSequenceBound \(0 = off\): expected an integer from 0 to 4096, received 4097/,
    ],
  ];

  eachThrows('%s', cases, (settings) => new Snowflake({ clock, ...settings }), IdsError);
});

describe('generating', () => {
  it('fills a millisecond with 4096 IDs, then waits for the next instead of reusing a slot', () => {
    const clock = new FakeClock(NOW + 0.25);
    const sf = new Snowflake({ machineParts: { datacenter: 2, worker: 9 }, clock });
    const ids = Array.from({ length: 4097 }, () => sf.nextIdSync());
    expect(clock.sleeps).toEqual([0.75]);
    expect(sf.decompose(ids[0]!)).toMatchObject({
      time: NOW - TWITTER_EPOCH,
      sequence: 0,
      parts: { datacenter: 2, worker: 9 },
    });
    expect(sf.decompose(ids[4095]!).sequence).toBe(4095);
    expect(sf.decompose(ids[4096]!)).toMatchObject({ time: NOW - TWITTER_EPOCH + 1, sequence: 0 });
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  // bwmarrin/snowflake has no time limit (its time silently runs into the sign bit), so Go has
  // nothing to match here; the engine's rule, Go sonyflake's, holds for every layout.
  it('once over the time limit, keeps failing when the clock reads lower again', () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ machineId: 5, clock });
    sf.nextIdSync();
    clock.set(layoutLimits(TWITTER_LAYOUT).endsAt);
    expect(() => sf.nextIdSync()).toThrow(/over the time limit/);
    clock.set(NOW + 1);
    expect(() => sf.nextIdSync()).toThrow(/over the time limit/);
  });

  it('nextId and nextIds give the same kind of IDs, never ahead of the clock', async () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ machineId: 5, clock });
    const batch = await sf.nextIds(10_000);
    const one = await sf.nextId();
    expect(new Set([...batch, one]).size).toBe(10_001);
    expect(sf.toTime(one).getTime()).toBeLessThanOrEqual(clock.now());
    expect(sf.decompose(one).machine).toBe(5);
  });

  it('a clock that steps back gives no duplicate; past the bound, a typed error', () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ machineId: 1, clock, maxClockBackwardMs: 100 });
    const ids = new Set<bigint>();
    for (let i = 0; i < 5000; i++) ids.add(sf.nextIdSync());
    clock.set(NOW - 50);
    for (let i = 0; i < 5000; i++) ids.add(sf.nextIdSync());
    expect(ids.size).toBe(10_000);
    clock.set(NOW - 60_000);
    expect(() => {
      for (let i = 0; i < 5000; i++) sf.nextIdSync();
    }).toThrow(ClockMovedBackwardsError);
  });

  it('1,000,000 IDs are strictly increasing and unique', () => {
    const sf = new Snowflake({ machineId: 1023, clock: runningClock(NOW, 0.0002) });
    expect(takeInOrder(() => sf.nextIdSync(), 1_000_000)).toEqual({ increasing: true, distinct: 1_000_000 });
  });

  it('a layout with no sequence bits issues one ID per millisecond', () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ nodeBits: 10, stepBits: 0, machineId: 3, clock });
    const ids = [sf.nextIdSync(), sf.nextIdSync(), sf.nextIdSync()];
    expect(ids.map((id) => sf.decompose(id).time - (NOW - TWITTER_EPOCH))).toEqual([0, 1, 2]);
    expect(clock.sleeps).toEqual([1, 1]);
  });
});

describe('random sequence start (randomSequenceBound)', () => {
  it('starts each tick the clock opens below the bound, so low traffic does not always end in 0', () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ machineId: 1, clock, randomSequenceBound: 100 });
    const starts = new Set<number>();
    for (let ms = 0; ms < 500; ms++) {
      clock.set(NOW + ms);
      starts.add(sf.decompose(sf.nextIdSync()).sequence);
    }
    expect(Math.max(...starts)).toBeLessThan(100);
    expect(starts.size).toBeGreaterThan(50);
  });

  it('costs the opened tick its first r slots (r < bound); a tick reached by rolling over keeps all 4096', () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ machineId: 1, clock, randomSequenceBound: 100 });
    let opened = 0;
    for (let round = 0; round < 20; round++) {
      clock.set(NOW + round * 10);
      const tick = NOW - TWITTER_EPOCH + round * 10;
      let inTick = 0;
      let id = sf.nextIdSync();
      const first = sf.decompose(id).sequence;
      while (sf.decompose(id).time === tick) {
        inTick++;
        id = sf.nextIdSync();
      }
      // The opened tick held 4096 - first IDs; the next one was reached by rolling over, from 0.
      expect(inTick).toBe(4096 - first);
      expect(inTick).toBeGreaterThan(4096 - 100);
      expect(sf.decompose(id)).toMatchObject({ time: tick + 1, sequence: 0 });
      opened += inTick;
    }
    expect(opened).toBeLessThan(20 * 4096);
  });

  it('off by default: every opened tick starts at 0, as in Go', () => {
    const clock = new FakeClock(NOW);
    const sf = new Snowflake({ machineId: 1, clock });
    for (let ms = 0; ms < 50; ms++) {
      clock.set(NOW + ms);
      expect(sf.decompose(sf.nextIdSync()).sequence).toBe(0);
    }
  });
});

describe('encodings', () => {
  it('every encoding round-trips generated IDs, and decodeAnyId finds the non-decimal ones', () => {
    const sf = new Snowflake({ machineId: 1023, clock: runningClock(NOW, 0.01) });
    for (let i = 0; i < 200; i++) {
      const id = sf.nextIdSync();
      for (const name of ENCODING_NAMES) {
        const text = encodeId(id, name);
        expect(decodeId(text, name)).toBe(id);
        if (name === 'hex' || name === 'crockford32' || name === 'bwmarrin58') {
          expect(decodeAnyId(text)).toEqual({ id, encoding: name });
        }
      }
    }
  });
});

describe('a state shared by threads', () => {
  // One thread's view of the passthrough; test/threads.test.ts runs real worker threads on it.
  it('passes `state` to the engine: generators on one shared state take distinct slots', () => {
    const clock = new FakeClock(NOW);
    const settings: SnowflakeSettings = { clock, machineParts: { datacenter: 1, worker: 2 } };
    const shared = createSharedState(snowflakeLayout(settings), 34);
    const a = new Snowflake({ ...settings, state: sharedStateCell(shared) });
    const cell = sharedStateCell(shared);
    const b = new Snowflake({ clock, machineId: cell.machineId, state: cell });
    const ids = [a.nextIdSync(), b.nextIdSync(), a.nextIdSync(), b.nextIdSync()];
    // Each generator reserves 64 slots (of the tick's 4096) per commit on the shared word, and hands them out in turn.
    expect(ids.map((id) => a.decompose(id).sequence)).toEqual([0, 64, 1, 65]);
    expect(ids.every((id) => decompose(id).machine === 34)).toBe(true);
    expect(() => new Snowflake({ clock, machineId: 35, state: sharedStateCell(shared) })).toThrow(
      /belongs to machine ID 34, received a generator for machine ID 35/,
    );
    // The discord preset has the same bits but another epoch: its slots would be other IDs.
    expect(
      () => new Snowflake({ clock, preset: 'discord', machineId: 34, state: sharedStateCell(shared) }),
    ).toThrow(InvalidArgumentError);
  });
});

describe('the event loop', () => {
  // The real event loop, measured in CPU time (see saturate): a busy-waiting generator would starve the 1 ms interval.
  it('keeps turning while nextId() is saturated at 4096 IDs per ms', async () => {
    const sf = new Snowflake({ machineId: 9 });
    const { count, beats, longestGap } = await saturate(() => sf.nextId(), 300);
    expect(count).toBeGreaterThan(10_000);
    expect(beats).toBeGreaterThan(20);
    expect(longestGap).toBeLessThan(100);
  });
});
