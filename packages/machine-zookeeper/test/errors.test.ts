// ZooKeeper's failures are the lease-error family of @ids/machine-lease, the very classes etcd and
// Redis raise, with `store: 'zookeeper'`: "the store is down" is one catch whatever the store.
import * as lease from '@ids/machine-lease/errors';
import { freePort } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import * as zookeeper from '../src/index.js';

const FAMILY = [
  'LeaseError',
  'StoreUnavailableError',
  'LeaseStoreRefusedError',
  'LeaseLostError',
  'LeaseSpaceFullError',
  'LeaseBitsMismatchError',
  'LeaseCorruptClaimError',
  'LeaseTimeAheadError',
] as const;

describe('the lease-error family', () => {
  it.each(FAMILY)('%s is the very class of @ids/machine-lease', (name) => {
    expect((zookeeper as Record<string, unknown>)[name]).toBe((lease as Record<string, unknown>)[name]);
  });

  it('no ZooKeeper class of its own for a concept the family has', () => {
    const own = Object.keys(zookeeper).filter((name) => /^Zookeeper.*Error$/.test(name));
    expect(own.sort()).toEqual(['ZookeeperChrootError', 'ZookeeperLeafWorkerError']);
  });

  it('an unreachable ZooKeeper is StoreUnavailableError naming the store', async () => {
    const port = await freePort();
    const error = await zookeeper
      .zookeeperMachineId({ connect: `127.0.0.1:${port}`, timeoutMs: 500 })({ bits: 4 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(lease.StoreUnavailableError);
    expect((error as lease.StoreUnavailableError).store).toBe('zookeeper');
    expect((error as lease.StoreUnavailableError).feature).toBe('machine-id');
    expect((error as Error).message).toMatch(
      /^zookeeper: no ZooKeeper session from 127\.0\.0\.1:\d+ within 500 ms/,
    );
  });
});
