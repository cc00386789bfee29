// "The store did not answer" is one class, @ids/engine's StoreUnavailableError, whichever store
// and whichever feature asked: a machine-ID claim on etcd, a lock on Redis or ZooKeeper, a
// segment store on PostgreSQL or Redis, the EC2 metadata service. One `instanceof` catches every
// case below; `store` and `feature` say which it was, and the message starts with the store.
// The stores are real: a Redis from @ids/test-services that is stopped while in use, and the
// clients of etcd, PostgreSQL, ZooKeeper and the metadata service pointed at a closed loopback
// port (nothing listening, as a store that is down looks from the client).
import { StoreUnavailableError } from '@ids/engine';
import * as lock from '@ids/lock';
import { redisLocks } from '@ids/lock/redis';
import { zookeeperLocks } from '@ids/lock/zookeeper';
import * as etcd from '@ids/machine-etcd';
import * as ip from '@ids/machine-ip';
import * as redisMachine from '@ids/machine-redis';
import * as zookeeper from '@ids/machine-zookeeper';
import * as segment from '@ids/segment';
import { closedLoopbackEndpoint, hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';

/** A loopback port nothing listens on. */
const closedPort = async () => new URL(await closedLoopbackEndpoint()).port;

/** The rejection of `promise`; fails the test when it resolves. */
async function rejection(promise: Promise<unknown> | unknown): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
}

/** The one catch a caller writes: every store, every feature. */
function storeDown(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError;
}

/** What every case must be, past the one catch. */
function expectDown(error: unknown, store: string, feature: StoreUnavailableError['feature']): void {
  expect(storeDown(error), String(error)).toBe(true);
  expect(error).toMatchObject({
    name: 'StoreUnavailableError',
    code: 'ERR_IDS_STORE_UNAVAILABLE',
    store,
    feature,
  });
  const message = (error as Error).message;
  expect(message.startsWith(`${store}: `), message).toBe(true);
}

describe('StoreUnavailableError: one class for every store that did not answer', () => {
  it('is the very class every package passes on (no second class of the same meaning)', () => {
    for (const entry of [lock, etcd, ip, redisMachine, zookeeper, segment] as Record<string, unknown>[]) {
      expect(entry.StoreUnavailableError).toBe(StoreUnavailableError);
      for (const old of ['LeaseStoreUnavailableError', 'MetadataUnavailableError']) {
        expect(entry[old], old).toBeUndefined();
      }
    }
  });

  it('a machine-ID claim on an etcd that is down: store etcd, feature machine-id', async () => {
    const claim = etcd.etcdMachineId({
      endpoints: [`http://127.0.0.1:${await closedPort()}`],
      timeoutMs: 1000,
    });
    expectDown(await rejection(claim({ bits: 4 })), 'etcd', 'machine-id');
  });

  it('a machine ID from an EC2 metadata service that is not there: store ec2-metadata, feature machine-id', async () => {
    const error = await rejection(
      ip.ec2PrivateIPv4({ endpoint: await closedLoopbackEndpoint(), timeoutMs: 1000 }),
    );
    expectDown(error, 'ec2-metadata', 'machine-id');
  });

  it('a lock on a ZooKeeper that is down: store zookeeper, feature lock', async () => {
    const error = await rejection(
      zookeeperLocks({ connect: `127.0.0.1:${await closedPort()}`, timeoutMs: 1000 }),
    );
    expectDown(error, 'zookeeper', 'lock');
  });

  it('a segment store on a PostgreSQL that is down: store postgres, feature segment', async () => {
    const store = await segment.postgresStore({
      connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`,
      timeoutMs: 2000,
    });
    try {
      expectDown(await rejection(store.allocate('t', 10)), 'postgres', 'segment');
      expectDown(await rejection(segment.Segments.create({ store, tag: 't' })), 'postgres', 'segment');
    } finally {
      await store.close();
    }
  });

  describe.skipIf(!hasRedis())('Redis, up and then stopped while in use', () => {
    const redis = serverForSuite(() => startRedis({ allowExternal: false }));

    it('a lock and a segment store on the same Redis: store redis, feature lock and segment', async () => {
      const locks = await redisLocks({ url: redis.server.url, prefix: 'store-unavailable', timeoutMs: 1000 });
      const segments = await segment.redisStore({ url: redis.server.url, timeoutMs: 1000 });
      try {
        // Both work while Redis is up. (A short lease: a fresh Redis holds the first lock back
        // for one TTL, in case it forgot a holder.)
        const held = await locks.tryAcquire('n', { ttlMs: 500 });
        expect(held).toBeDefined();
        await held?.release();
        await segments.createTag('t', { after: 0n });
        expect((await segments.allocate('t', 10)).first).toBe(1n);

        await redis.server.stop();
        const failures = [
          await rejection(locks.tryAcquire('n')),
          await rejection(locks.acquire('n', { waitMs: 500 })),
          await rejection(segments.allocate('t', 10)),
        ];
        // One catch for all of them, told apart by `feature`.
        expect(failures.every(storeDown)).toBe(true);
        expectDown(failures[0], 'redis', 'lock');
        expectDown(failures[1], 'redis', 'lock');
        expectDown(failures[2], 'redis', 'segment');
      } finally {
        await locks.close();
        await segments.close();
      }
    });
  });
});
