import { composeIn, InvalidBitsTimeError, InvalidLayoutError } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { badGeneratorSettings, eachThrows } from '../../engine/test/kit.js';
import {
  createSharedState,
  FakeClock,
  InvalidArgumentError,
  OverTimeLimitError,
  Sonyflake,
  type SonyflakeSettings,
  sharedStateCell,
  sonyflakeLayout,
} from '../src/index.js';

const NOW = Date.UTC(2026, 10, 22, 12);

describe('settings are checked at construction, not mid-run', () => {
  eachThrows(
    '%s is InvalidArgumentError saying what, expected and received',
    [
      ...badGeneratorSettings(InvalidArgumentError),
      [
        'state with a fence that is not a function',
        { state: { load: () => 0, commit: () => true, fence: 1 } },
        InvalidArgumentError,
        /state\.fence: expected a function or nothing, received 1 \(number\)/,
      ],
    ],
    (settings) =>
      new Sonyflake(
        (settings === null
          ? null
          : { machineId: 1, clock: new FakeClock(NOW), ...settings }) as SonyflakeSettings,
      ),
  );

  it('create() refuses them the same way', async () => {
    await expect(Sonyflake.create(null as never)).rejects.toThrow(InvalidArgumentError);
    await expect(Sonyflake.create({ machineId: 1, onError: 'warn' as never })).rejects.toThrow(/onError/);
  });

  it('a real shared state cell passes the check and issues', () => {
    const clock = new FakeClock(NOW);
    const shared = createSharedState(sonyflakeLayout({ clock }), 3);
    const sonyflake = new Sonyflake({ machineId: 3, clock, state: sharedStateCell(shared) });
    expect(sonyflake.decompose(sonyflake.nextIdSync()).machine).toBe(3);
  });
});

describe('Go-valid settings are accepted', () => {
  it.each([
    ['bitsSequence + bitsMachineId = 8', { bitsSequence: 4, bitsMachineId: 4 }],
    ['bitsSequence + bitsMachineId = 13', { bitsSequence: 5, bitsMachineId: 8 }],
    ['a time unit of an hour', { timeUnit: 3_600_000 }],
    ['a time unit of a day and 2 low bits', { timeUnit: 86_400_000, bitsSequence: 1, bitsMachineId: 1 }],
  ])('%s: IDs are Go’s bit for bit', (_name, settings) => {
    const clock = new FakeClock(NOW);
    const sonyflake = new Sonyflake({ ...settings, machineId: 1, clock });
    const { layout } = sonyflake;
    const id = sonyflake.nextIdSync();
    // Go: time << (seq + machine) | seq << machine | machine, with time in units since the start.
    const tick = BigInt(Math.floor(NOW / layout.timeUnitMs) - Math.floor(layout.epochMs / layout.timeUnitMs));
    expect(id).toBe((tick << BigInt(layout.sequenceBits + layout.machineBits)) | 1n);
    expect(composeIn(layout, NOW, 0, 1)).toBe(id);
    // The time field ends within the Date range: the layout's last instant is a Date.
    expect(63 - layout.sequenceBits - layout.machineBits).toBeGreaterThanOrEqual(layout.timeBits);
    expect(() => composeIn(layout, 8.64e15, 0, 1)).toThrow(OverTimeLimitError);
  });

  it('Go’s own floor stays: fewer than 32 time bits is InvalidBitsTimeError', () => {
    expect(() => sonyflakeLayout({ bitsSequence: 16, bitsMachineId: 16 })).toThrow(InvalidBitsTimeError);
  });

  it('the one limit left is typed: a unit so long that no tick ends within the Date range', () => {
    expect(() => sonyflakeLayout({ timeUnit: 9e15 })).toThrow(InvalidLayoutError);
    expect(() => sonyflakeLayout({ timeUnit: 9e15 })).toThrow(
      /ends past the last instant a JS Date can hold/,
    );
  });
});
