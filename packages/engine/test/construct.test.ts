import { describe, expect, it, vi } from 'vitest';
import { constructorMachineId, createGenerator, type MachineIdRequest } from '../src/construct.js';
import { AsyncSettingError, MachineIdRejectedError } from '../src/errors.js';
import { defineLayout } from '../src/layout.js';
import type { MachineIdClaim } from '../src/machine.js';

const layout = defineLayout({ timeBits: 41, timeUnitMs: 1, sequenceBits: 12, machineBits: 10, epochMs: 0 });

/** A stand-in preset: what Sonyflake and Snowflake do with the two helpers. */
class Preset {
  readonly machine: number | MachineIdClaim;
  constructor(
    readonly settings: { source: MachineIdRequest['source']; fail?: boolean },
    request: MachineIdRequest = { layout, source: settings.source },
  ) {
    this.machine = constructorMachineId(settings, request);
    if (settings.fail) throw new Error('construction failed after the machine ID');
  }
}

describe('constructorMachineId', () => {
  it('resolves a numeric ID or a synchronous provider, telling it the field width', () => {
    expect(new Preset({ source: 7 }).machine).toBe(7);
    expect(new Preset({ source: ({ bits }) => bits }).machine).toBe(10);
  });

  it('refuses an asynchronous provider on the synchronous path', () => {
    expect(() => new Preset({ source: async () => 1 })).toThrow(AsyncSettingError);
  });
});

describe('createGenerator', () => {
  it('runs an async provider and check once, and the constructor takes the resolved ID', async () => {
    const provider = vi.fn(async () => 99);
    const check = vi.fn(async () => true);
    const made = await createGenerator({ source: provider }, { layout, source: provider, check }, (s) => {
      return new Preset(s);
    });
    expect(made.machine).toBe(99);
    expect(provider).toHaveBeenCalledTimes(1);
    expect(check).toHaveBeenCalledTimes(1);
    expect(check).toHaveBeenCalledWith(99);
  });

  it('hands the constructor a copy, so the settings object of the caller never carries the resolved ID', async () => {
    const settings = { source: async () => 5 };
    const made = await createGenerator(settings, { layout, source: settings.source }, (s) => new Preset(s));
    expect(made.settings).not.toBe(settings);
    expect(made.settings).toEqual(settings);
    // The original settings still go through the provider: the synchronous path refuses it.
    expect(() => new Preset(settings)).toThrow(AsyncSettingError);
  });

  it('releases a claimed ID when construction fails, and passes the error on', async () => {
    const release = vi.fn();
    const claim: MachineIdClaim = { machineId: 3, release };
    const settings = { source: async () => claim, fail: true };
    await expect(
      createGenerator(settings, { layout, source: settings.source }, (s) => new Preset(s)),
    ).rejects.toThrow('construction failed after the machine ID');
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('a refused ID rejects before construction, and its claim is released', async () => {
    const release = vi.fn();
    const construct = vi.fn((s: { source: number }) => s);
    await expect(
      createGenerator(
        { source: 1 },
        { layout, source: async () => ({ machineId: 4, release }), check: () => false },
        construct,
      ),
    ).rejects.toThrow(MachineIdRejectedError);
    expect(construct).not.toHaveBeenCalled();
    expect(release).toHaveBeenCalledTimes(1);
  });
});
