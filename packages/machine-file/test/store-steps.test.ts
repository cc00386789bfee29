// The stores of the `auto` chain: in it only where configured, their package imported by name
// only when the step runs, a missing package a typed error. The claims themselves, against real
// etcd, Redis and ZooKeeper servers, are test/machine-id-chain.test.ts's (this package cannot
// depend on the store packages); here the package is a stand-in given through `importPackage`,
// the seam the CLI and the server use to import from their own folder.
import { InvalidArgumentError, type MachineIdProvider, MissingPackageError } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { AutoMachineIdError, autoSteps, autoStepTable } from '../src/index.js';
import { fakeTable, runAutoAsync, tempDir } from './helpers.js';

const NO_PRIVATE = () => ({ eth0: [{ address: '192.0.2.10', family: 'IPv4', internal: false }] });

/** A stand-in store package: records what it was asked and hands out `id`. */
function standIn(id = 7) {
  const made: Record<string, unknown>[] = [];
  const imported: string[] = [];
  const claimed: number[] = [];
  const provider = (options: Record<string, unknown>): MachineIdProvider => {
    if (options.connect === 'zk1') {
      throw new InvalidArgumentError('expected host:port, received "zk1"', { option: 'connect' });
    }
    made.push(options);
    return ({ bits }) => {
      claimed.push(bits);
      return { machineId: id, key: `/claims/${id}`, release() {} } as never;
    };
  };
  const importPackage = async (name: string) => {
    imported.push(name);
    return { redisMachineId: provider, etcdMachineId: provider, zookeeperMachineId: provider };
  };
  return { made, imported, claimed, importPackage };
}

function run(env: Record<string, string>, extra: Parameters<typeof runAutoAsync>[0] = {}) {
  return runAutoAsync({
    env,
    interfaces: NO_PRIVATE,
    claim: { dir: tempDir(), processes: fakeTable(100), releaseOnExit: false },
    ...extra,
  });
}

describe('the store steps of the auto chain', () => {
  it('one table: explicit, the stores of the store table, then what the host says and the host claim', () => {
    expect(autoStepTable().map((row) => row.name)).toEqual([
      'explicit',
      'redis',
      'etcd',
      'zookeeper',
      'kubernetes-ordinal',
      'ec2',
      'private-ip',
      'ipv6-ula',
      'host-claim',
    ]);
    expect(autoStepTable().filter((row) => row.env)).toEqual([
      expect.objectContaining({ name: 'redis', env: ['IDS_MACHINE_ID_REDIS_URL', 'IDS_REDIS_URL'] }),
      expect.objectContaining({ name: 'etcd', env: ['IDS_ETCD_ENDPOINTS'], package: '@ids/machine-etcd' }),
      expect.objectContaining({ name: 'zookeeper', env: ['IDS_ZOOKEEPER_CONNECT'] }),
    ]);
  });

  it('a store is in the chain only where its variable is set, right after the explicit ID', () => {
    expect(autoSteps({ env: {} }).map((s) => s.name)).not.toContain('redis');
    const names = (env: Record<string, string>) => autoSteps({ env }).map((s) => s.name);
    expect(names({ IDS_REDIS_URL: 'redis://127.0.0.1:1' }).slice(0, 2)).toEqual(['explicit', 'redis']);
    expect(names({ IDS_ETCD_ENDPOINTS: 'http://127.0.0.1:1' }).slice(0, 2)).toEqual(['explicit', 'etcd']);
    expect(names({ IDS_ZOOKEEPER_CONNECT: '127.0.0.1:1' }).slice(0, 2)).toEqual(['explicit', 'zookeeper']);
    expect(names({ IDS_REDIS_URL: ' ' })).not.toContain('redis');
  });

  it('imports the package by name only when the step runs, and gives it where the store is', async () => {
    const pkg = standIn();
    const steps = autoSteps({ env: { IDS_ETCD_ENDPOINTS: 'http://127.0.0.1:2379' }, ...pkg });
    expect(pkg.imported).toEqual([]);
    const answer = await run({ IDS_ETCD_ENDPOINTS: 'http://127.0.0.1:2379' }, { steps });
    expect(pkg.imported).toEqual(['@ids/machine-etcd']);
    expect(pkg.made).toEqual([{ endpoints: 'http://127.0.0.1:2379' }]);
    expect(answer).toMatchObject({ id: 7, step: 'etcd', title: 'etcd claim' });
    expect(answer.explain()).toBe(
      '1. explicit ID: skipped - no machineId option, and IDS_MACHINE_ID is not set\n2. etcd claim: used - claimed machine ID 7 in etcd at http://127.0.0.1:2379 (key /claims/7)',
    );
  });

  it('an explicit ID wins: the store is never loaded', async () => {
    const pkg = standIn();
    const answer = await run({ IDS_MACHINE_ID: '3', IDS_REDIS_URL: 'redis://127.0.0.1:1' }, pkg);
    expect(answer.id).toBe(3);
    expect(pkg.imported).toEqual([]);
  });

  it('one step makes its provider once, with the lease settings: every claim of a pool shares it', async () => {
    const pkg = standIn();
    const steps = autoSteps({
      env: { IDS_REDIS_URL: 'redis://:secret@127.0.0.1:1' },
      ttlSeconds: 4,
      shareLease: true,
      ...pkg,
    });
    const first = await run({}, { steps });
    await run({}, { steps });
    expect(pkg.imported).toEqual(['@ids/machine-redis']);
    expect(pkg.made).toEqual([{ url: 'redis://:secret@127.0.0.1:1', ttlSeconds: 4, shareLease: true }]);
    expect(pkg.claimed).toEqual([16, 16]);
    // The password stays out of the trail.
    expect(first.explain()).toMatch(/in Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 /);
    expect(first.explain()).not.toMatch(/secret/);
  });

  it('IDS_MACHINE_ID_REDIS_URL wins over IDS_REDIS_URL, and a flag over both', async () => {
    const pkg = standIn();
    const env = { IDS_MACHINE_ID_REDIS_URL: 'redis://127.0.0.1:2', IDS_REDIS_URL: 'redis://127.0.0.1:1' };
    await run(env, pkg);
    await run(env, { ...pkg, storeFlags: { redis: { value: 'redis://127.0.0.1:3', flag: '--redis' } } });
    expect(pkg.made.map((o) => o.url)).toEqual(['redis://127.0.0.1:2', 'redis://127.0.0.1:3']);
  });

  it('a value the store refuses is named as the variable or flag that gave it, and stops the chain', async () => {
    for (const [extra, from] of [
      [{}, 'IDS_ZOOKEEPER_CONNECT'],
      [{ storeFlags: { zookeeper: { value: 'zk1', flag: '--zookeeper' } } }, '--zookeeper'],
    ] as const) {
      const error = await run({ IDS_ZOOKEEPER_CONNECT: 'zk1' }, { ...standIn(), ...extra }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AutoMachineIdError);
      const cause = (error as AutoMachineIdError).cause as InvalidArgumentError;
      expect(cause).toBeInstanceOf(InvalidArgumentError);
      expect(cause.option).toBe(from);
      expect(cause.message).toBe(`${from}: expected host:port, received "zk1"`);
      expect((error as AutoMachineIdError).trail.map((s) => s.outcome)).toEqual(['skipped', 'failed']);
    }
  });

  it('a store package that is not installed is ERR_IDS_MISSING_PACKAGE naming it, and no host-derived ID', async () => {
    // The default import runs from this package, which (by design) has no store package beside it.
    const error = await run({ IDS_ZOOKEEPER_CONNECT: '127.0.0.1:1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AutoMachineIdError);
    const cause = (error as AutoMachineIdError).cause as MissingPackageError;
    expect(cause).toBeInstanceOf(MissingPackageError);
    expect(cause).toMatchObject({ code: 'ERR_IDS_MISSING_PACKAGE', packages: ['@ids/machine-zookeeper'] });
    expect(cause.message).toBe(
      'install @ids/machine-zookeeper to use a ZooKeeper claim (IDS_ZOOKEEPER_CONNECT): @ids/machine-zookeeper is not installed',
    );
    expect((error as AutoMachineIdError).trail.map((s) => s.step)).toEqual(['explicit', 'zookeeper']);
  });
});
