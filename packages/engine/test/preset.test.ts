import { describe, expect, it, vi } from 'vitest';
import {
  AsyncSettingError,
  InvalidArgumentError,
  InvalidMachineIdError,
  MachineIdRejectedError,
} from '../src/errors.js';
import { defineLayout } from '../src/layout.js';
import {
  idOf,
  type MachineIdClaim,
  type MachineIdSource,
  releaseQuietly,
  resolveMachineId,
  resolveMachineIdSync,
} from '../src/machine.js';
import type { GeneratorSettings } from '../src/options.js';
import { createWithMachineId, type Preset as PresetRules, presetClass } from '../src/preset.js';

const layout = defineLayout({ timeBits: 41, timeUnitMs: 1, sequenceBits: 12, machineBits: 10, epochMs: 0 });

/** A stand-in preset: what Sonyflake and Snowflake do, a constructor that resolves synchronously. */
class Preset {
  readonly machine: number | MachineIdClaim;
  constructor(source: MachineIdSource, fail = false) {
    this.machine = resolveMachineIdSync(layout, source);
    if (fail) throw new Error('construction failed after the machine ID');
  }
}

describe('the synchronous path', () => {
  it('resolves a numeric ID or a synchronous provider, telling it the field width', () => {
    expect(new Preset(7).machine).toBe(7);
    expect(new Preset(({ bits }) => bits).machine).toBe(10);
  });

  it('refuses an asynchronous provider, and releases the claim it later resolves to', async () => {
    const release = vi.fn();
    expect(() => new Preset(async () => ({ machineId: 1, release }))).toThrow(AsyncSettingError);
    await vi.waitFor(() => expect(release).toHaveBeenCalledTimes(1));
  });

  it('refuses an asynchronous check, releasing a claim', () => {
    const release = vi.fn();
    expect(() => resolveMachineIdSync(layout, { machineId: 2, release }, async () => true)).toThrow(
      AsyncSettingError,
    );
    expect(release).toHaveBeenCalledTimes(1);
  });
});

describe('the sync and async paths are one description of the steps', () => {
  const cases: [string, MachineIdSource, ((id: number) => boolean) | undefined][] = [
    ['in range, no check', 5, undefined],
    ['out of range', 5000, undefined],
    ['refused by the check', 6, (id) => id !== 6],
    [
      'a check that throws',
      7,
      () => {
        throw new Error('no');
      },
    ],
    [
      'a provider that throws',
      () => {
        throw new Error('down');
      },
      undefined,
    ],
  ];
  it.each(cases)('%s: the same answer both ways', async (_name, source, check) => {
    const sync = (() => {
      try {
        return { value: resolveMachineIdSync(layout, source, check) };
      } catch (error) {
        return { error: (error as Error).constructor.name, message: (error as Error).message };
      }
    })();
    const async = await resolveMachineId(layout, source, check).then(
      (value) => ({ value }),
      (error: Error) => ({ error: error.constructor.name, message: error.message }),
    );
    expect(async).toEqual(sync);
  });
});

describe('createWithMachineId', () => {
  it('runs an async provider and check once, and builds with the resolved ID', async () => {
    const provider = vi.fn(async () => 99);
    const check = vi.fn(async () => true);
    const made = await createWithMachineId({ layout, source: provider, check }, (id) => new Preset(id));
    expect(made.machine).toBe(99);
    expect(provider).toHaveBeenCalledTimes(1);
    expect(check).toHaveBeenCalledTimes(1);
    expect(check).toHaveBeenCalledWith(99);
  });

  it('releases a claimed ID when construction fails, and passes the error on', async () => {
    const release = vi.fn();
    const claim: MachineIdClaim = { machineId: 3, release };
    await expect(
      createWithMachineId({ layout, source: async () => claim }, (id) => new Preset(id, true)),
    ).rejects.toThrow('construction failed after the machine ID');
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('a refused ID rejects before construction, and its claim is released first', async () => {
    const release = vi.fn();
    const build = vi.fn((id: number | MachineIdClaim) => id);
    await expect(
      createWithMachineId(
        { layout, source: async () => ({ machineId: 4, release }), check: () => false },
        build,
      ),
    ).rejects.toThrow(MachineIdRejectedError);
    expect(build).not.toHaveBeenCalled();
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('an ID out of range is InvalidMachineIdError, and its claim is released', async () => {
    const release = vi.fn();
    await expect(
      createWithMachineId({ layout, source: { machineId: 1024, release } }, (id) => id),
    ).rejects.toThrow(InvalidMachineIdError);
    expect(release).toHaveBeenCalledTimes(1);
  });
});

describe('idOf and releaseQuietly', () => {
  it('idOf reads a number or a claim', () => {
    expect(idOf(4)).toBe(4);
    expect(idOf({ machineId: 9, release: () => undefined })).toBe(9);
  });

  it('releaseQuietly never rejects: a failed release goes to onError', async () => {
    const onError = vi.fn();
    const failure = new Error('release failed');
    await expect(
      releaseQuietly({ machineId: 1, release: () => Promise.reject(failure) }, onError),
    ).resolves.toBeUndefined();
    expect(onError).toHaveBeenCalledWith(failure);
    await expect(releaseQuietly(5)).resolves.toBeUndefined();
    await expect(
      releaseQuietly({
        machineId: 1,
        release: () => {
          throw failure;
        },
      }),
    ).resolves.toBeUndefined();
  });
});

describe('presetClass', () => {
  type TinySettings = GeneratorSettings & { readonly machineId?: MachineIdSource };
  const tiny: PresetRules<TinySettings> = {
    layout: () => layout,
    machineId: (settings, presetLayout) => ({ layout: presetLayout, source: settings.machineId ?? 0 }),
  };
  class Tiny extends presetClass(tiny) {
    greet(): string {
      return `tiny ${this.machine}`;
    }
  }

  it('gives a preset the constructor and create() that Sonyflake and Snowflake have', async () => {
    const made = new Tiny({ machineId: 3, sameMachineId: 'allow' });
    const created = await Tiny.create({ machineId: async () => 4, sameMachineId: 'allow' });
    expect(created).toBeInstanceOf(Tiny);
    expect([made.greet(), created.greet()]).toEqual(['tiny 3', 'tiny 4']);
    expect(() => new Tiny({ machineId: async () => 5 })).toThrow(AsyncSettingError);
    await Promise.all([made.close(), created.close()]);
  });

  it('checks every setting before the machine ID is asked for, so a bad one never leaves a claim', async () => {
    const provider = vi.fn(() => 1);
    for (const bad of [{ randomSequenceBound: -1 }, { maxClockBackwardMs: -1 }, { onError: 5 as never }]) {
      expect(() => new Tiny({ machineId: provider, ...bad })).toThrow(InvalidArgumentError);
      await expect(Tiny.create({ machineId: provider, ...bad })).rejects.toThrow(InvalidArgumentError);
    }
    expect(provider).not.toHaveBeenCalled();
  });
});
