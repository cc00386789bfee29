import { AsyncSettingError } from '@ids/engine';
import { NoPrivateAddressError } from '@ids/machine-ip';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidMachineIdError, MachineIdProviderError, Sonyflake } from '../src/index.js';
import { defaultMachineIdSource } from '../src/machine.js';

// Only documentation-range and loopback addresses: this machine has no private IPv4, and tests
// must not depend on whether the host running them has one.
const noPrivate = () => ({ eth0: [{ address: '192.0.2.10', family: 'IPv4', internal: false }] });

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("Sonyflake's default machine ID: IDS_MACHINE_ID, else Go's private-IPv4 rule", () => {
  it('IDS_MACHINE_ID=5 makes Sonyflake.create() and new Sonyflake() use 5', async () => {
    vi.stubEnv('IDS_MACHINE_ID', '5');
    const created = await Sonyflake.create();
    expect(created.machine).toBe(5);
    await created.close();
    const built = new Sonyflake({ bitsMachineId: 8 });
    expect(built.machine).toBe(5);
    await built.close();
  });

  it('an explicit machineId wins over IDS_MACHINE_ID', async () => {
    vi.stubEnv('IDS_MACHINE_ID', '5');
    const sonyflake = await Sonyflake.create({ machineId: 9 });
    expect(sonyflake.machine).toBe(9);
    await sonyflake.close();
  });

  it.each([
    ['-1', '"-1" (string)'],
    ['5x', '"5x" (string)'],
    ['0x10', '"0x10" (string)'],
    ['1e3', '"1e3" (string)'],
    ['65536', '"65536" (string)'],
  ])(
    'IDS_MACHINE_ID=%s is InvalidMachineIdError naming the variable, the range and the value',
    async (raw, shown) => {
      vi.stubEnv('IDS_MACHINE_ID', raw);
      const error = await Sonyflake.create().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMachineIdError);
      expect((error as Error).message).toBe(
        `IDS_MACHINE_ID: expected an integer from 0 to 65535, received ${shown}`,
      );
      expect(() => new Sonyflake()).toThrow(InvalidMachineIdError);
    },
  );

  it('the range follows bitsMachineId', () => {
    vi.stubEnv('IDS_MACHINE_ID', '300');
    expect(() => new Sonyflake({ bitsMachineId: 8 })).toThrow(
      /IDS_MACHINE_ID: expected an integer from 0 to 255, received "300"/,
    );
  });

  it("without IDS_MACHINE_ID and without a private address, the error's hint is true for a library user", () => {
    const source = defaultMachineIdSource(16, {}, noPrivate);
    expect(typeof source).toBe('function');
    let thrown: unknown;
    try {
      (source as (c: { bits: number }) => number)({ bits: 16 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(NoPrivateAddressError);
    expect((thrown as Error).message).toBe(
      "no private ip address: expected an interface address in 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 or 169.254.0.0/16, found 192.0.2.10; set IDS_MACHINE_ID=N or pass { machineId: N } (N from 0 to 65535), or pass { machineId: 'auto' } to fall back to a host claim (@ids/machine-file; unique on this host only)",
    );
  });

  it('Sonyflake.create() wraps that error as MachineIdProviderError, whose message carries the hint', async () => {
    vi.stubEnv('IDS_MACHINE_ID', '');
    const error = await Sonyflake.create({ machineId: defaultMachineIdSource(16, {}, noPrivate) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MachineIdProviderError);
    expect((error as Error).cause).toBeInstanceOf(NoPrivateAddressError);
    expect((error as Error).message).toMatch(/set IDS_MACHINE_ID=N or pass \{ machineId: N \}/);
  });

  it("machineId: 'auto' needs create(): the constructor says so", () => {
    expect(() => new Sonyflake({ machineId: 'auto' })).toThrow(AsyncSettingError);
    expect(() => new Sonyflake({ machineId: 'auto' })).toThrow(
      /await Sonyflake\.create\(\{ machineId: 'auto' \}\)/,
    );
  });
});
