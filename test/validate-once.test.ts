// Settings are read, and so checked, once per construction: the preset turns them into one checked
// options value, the layout is built once, and the generator checks nothing again. Each test hands
// the constructor a settings object that counts how often each of its keys is read.
import {
  checkGeneratorOptions,
  createSharedState,
  defineLayout,
  FakeClock,
  IdGenerator,
  sharedStateCell,
} from '@ids/engine';
import { Snowflake, snowflakeLayout } from '@ids/snowflake';
import { Sonyflake, sonyflakeLayout } from '@ids/sonyflake';
import { describe, expect, it } from 'vitest';

const NOW = Date.UTC(2026, 10, 26, 12);

/** `settings` behind a proxy that counts the reads of each key. */
function counted<T extends object>(settings: T): { settings: T; reads: Record<string, number> } {
  const reads: Record<string, number> = {};
  const proxy = new Proxy(settings, {
    get(target, key, receiver) {
      if (typeof key === 'string') reads[key] = (reads[key] ?? 0) + 1;
      return Reflect.get(target, key, receiver);
    },
  });
  return { settings: proxy, reads };
}

/** One read of each setting the type has (given or not), and no read of anything else. */
function once(keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((key) => [key, 1]));
}

const GENERATOR_KEYS = [
  'clock',
  'maxClockBackwardMs',
  'randomSequenceBound',
  'onError',
  'state',
  'sameMachineId',
];
const ENGINE_KEYS = [...GENERATOR_KEYS, 'layout', 'machineId'];
const SONYFLAKE_KEYS = [
  ...GENERATOR_KEYS,
  ...['bitsSequence', 'bitsMachineId', 'timeUnit', 'startTime', 'machineId', 'checkMachineId'],
];
const SNOWFLAKE_KEYS = [
  ...GENERATOR_KEYS,
  ...['preset', 'nodeBits', 'stepBits', 'epoch', 'machineId', 'machineParts', 'checkMachineId'],
];

function sonyflakeSettings(machineId: unknown) {
  const clock = new FakeClock(NOW);
  const base = { bitsSequence: 8, bitsMachineId: 16, timeUnit: 10, startTime: Date.UTC(2025, 0, 1), clock };
  const shared = createSharedState(sonyflakeLayout(base), 7);
  return {
    ...base,
    machineId,
    checkMachineId: (id: number) => id === 7,
    maxClockBackwardMs: 500,
    randomSequenceBound: 4,
    onError: () => undefined,
    state: sharedStateCell(shared),
    sameMachineId: 'allow' as const,
  };
}

describe('each setting is read once per construction', () => {
  it('new Sonyflake(settings)', async () => {
    const given = sonyflakeSettings(7);
    const { settings, reads } = counted(given);
    const sonyflake = new Sonyflake(settings as never);
    expect(reads).toEqual(once(SONYFLAKE_KEYS));
    expect(sonyflake.decompose(sonyflake.nextIdSync()).machine).toBe(7);
    await sonyflake.close();
  });

  it('await Sonyflake.create(settings), with an async provider', async () => {
    const given = sonyflakeSettings(async () => 7);
    const { settings, reads } = counted(given);
    const sonyflake = await Sonyflake.create(settings as never);
    expect(reads).toEqual(once(SONYFLAKE_KEYS));
    await sonyflake.close();
  });

  it('new Snowflake(settings), a preset and custom node/step bits', async () => {
    const clock = new FakeClock(NOW);
    for (const layoutSettings of [
      { preset: 'discord' as const, epoch: Date.UTC(2020, 0, 1) },
      { nodeBits: 8, stepBits: 10, epoch: Date.UTC(2020, 0, 1) },
    ]) {
      const base = { ...layoutSettings, clock };
      const given = {
        ...base,
        machineId: 5,
        checkMachineId: () => true,
        maxClockBackwardMs: 0,
        randomSequenceBound: 2,
        onError: () => undefined,
        state: sharedStateCell(createSharedState(snowflakeLayout(base), 5)),
        sameMachineId: 'allow' as const,
      };
      const { settings, reads } = counted(given);
      const snowflake = new Snowflake(settings);
      expect(reads).toEqual(once(SNOWFLAKE_KEYS));
      await snowflake.close();
    }
  });

  it('await Snowflake.create(settings), with machine parts', async () => {
    const given = {
      preset: 'twitter' as const,
      clock: new FakeClock(NOW),
      machineParts: { datacenter: 1, worker: 2 },
    };
    const { settings, reads } = counted(given);
    const snowflake = await Snowflake.create(settings);
    expect(reads).toEqual(once(SNOWFLAKE_KEYS));
    expect(snowflake.decompose(await snowflake.nextId()).parts).toEqual({ datacenter: 1, worker: 2 });
    await snowflake.close();
  });

  it('new IdGenerator(checkGeneratorOptions(options)), the engine path', async () => {
    const layout = defineLayout({
      timeBits: 40,
      timeUnitMs: 10,
      sequenceBits: 4,
      machineBits: 8,
      epochMs: 0,
    });
    const given = {
      layout,
      machineId: 3,
      clock: new FakeClock(NOW),
      maxClockBackwardMs: 10,
      randomSequenceBound: 1,
      onError: () => undefined,
      state: sharedStateCell(createSharedState(layout, 3)),
      sameMachineId: 'allow' as const,
    };
    const { settings, reads } = counted(given);
    const generator = new IdGenerator(checkGeneratorOptions(settings));
    expect(reads).toEqual(once(ENGINE_KEYS));
    await generator.close();
  });
});
