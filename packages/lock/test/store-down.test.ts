// The store down, on every store and every entry point: the factories, acquire (with and without
// waitMs), and the retries of a wait. Each ends with StoreUnavailableError within its bound,
// never a bare Error, never a message about a holder nobody saw, and a wait of 100 retries leaves
// no listener behind on the signal that ends it.
import { getEventListeners } from 'node:events';
import {
  closedLoopbackEndpoint,
  hasZookeeper,
  serverForSuite,
  startEtcd,
  startRedis,
  startZookeeper,
} from '@ids/test-services';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { etcdLocks } from '../src/etcd.js';
import type { Locks } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { zookeeperLocks } from '../src/zookeeper.js';
import { failure, uniqueName } from './helpers.js';

const closedPort = async () => new URL(await closedLoopbackEndpoint()).port;

/** What every store-down failure must be. */
function expectUnavailable(error: Error, store: string) {
  expect(error).toMatchObject({
    name: 'StoreUnavailableError',
    code: 'ERR_IDS_STORE_UNAVAILABLE',
    store,
    feature: 'lock',
  });
  expect(error.message).not.toMatch(/held by another holder/);
}

/** Times a failure, in ms. */
async function timed(promise: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = performance.now();
  const error = await failure(promise);
  return { error, ms: performance.now() - started };
}

/**
 * Watches every 'abort' listener added to an AbortSignal while `run` runs: how many were added
 * in all (`added`, read live), and the most one signal held at once (`peak`).
 */
async function abortListeners(
  run: (seen: { added: number; peak: number }) => Promise<unknown>,
): Promise<{ peak: number; added: number }> {
  const add = EventTarget.prototype.addEventListener;
  const seen = { added: 0, peak: 0 };
  const spy = vi.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (
    this: EventTarget,
    ...args: Parameters<EventTarget['addEventListener']>
  ) {
    add.apply(this, args);
    if (args[0] === 'abort' && this instanceof AbortSignal) {
      seen.added++;
      seen.peak = Math.max(seen.peak, getEventListeners(this, 'abort').length);
    }
  });
  try {
    await run(seen);
  } finally {
    spy.mockRestore();
  }
  return seen;
}

/** The cases every store runs: `stop`/`start` the suite's server, `open` locks on it. */
function storeDown(
  store: string,
  o: { open: (extra?: object) => Promise<Locks>; stop(): Promise<void>; start(): Promise<void> },
) {
  const opened: Locks[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((locks) => locks.close().catch(() => undefined)));
  });
  const open = async (extra?: object) => {
    const locks = await o.open(extra);
    opened.push(locks);
    return locks;
  };

  it(`acquire with waitMs while the store is down: unavailable within waitMs, connecting included`, async () => {
    const locks = await open();
    await o.stop();
    try {
      const { error, ms } = await timed(locks.acquire('n', { waitMs: 1500 }));
      console.log(
        `${store}: acquire({ waitMs: 1500 }), store down: ${error.name} after ${Math.round(ms)} ms`,
      );
      expectUnavailable(error, store);
      expect(ms).toBeLessThan(1500 + 400);
      const once = await timed(locks.acquire('n', { waitMs: 0 }));
      console.log(
        `${store}: acquire({ waitMs: 0 }), store down: ${once.error.name} after ${Math.round(once.ms)} ms`,
      );
      expectUnavailable(once.error, store);
      expect(once.ms).toBeLessThan(3400); // one attempt, within timeoutMs (3,000)
      expectUnavailable(await failure(locks.tryAcquire('n')), store);
    } finally {
      await o.start();
    }
  });

  it(`a waiter in line when the store stops: unavailable within its waitMs`, async () => {
    const locks = await open();
    const held = await locks.acquire('w', { ttlMs: 5000 });
    const started = performance.now();
    const waiting = timed(locks.acquire('w', { waitMs: 3000 }));
    await new Promise((r) => setTimeout(r, 500)); // in line, watching the holder
    await o.stop();
    try {
      const { error } = await waiting;
      const ms = performance.now() - started;
      console.log(
        `${store}: a waiter (waitMs 3000) as the store stops: ${error.name} after ${Math.round(ms)} ms`,
      );
      expectUnavailable(error, store);
      expect(ms).toBeLessThan(3000 + 400);
    } finally {
      await held.release().catch(() => undefined);
      await o.start();
    }
  });

  it(`release while the store is down settles within timeoutMs, typed if it fails`, async () => {
    const locks = await open({ timeoutMs: 1000 });
    const lock = await locks.acquire('r', { ttlMs: 5000 });
    await o.stop();
    try {
      const started = performance.now();
      const error = await lock.release().then(
        () => undefined,
        (e: Error) => e,
      );
      const ms = performance.now() - started;
      console.log(`${store}: release, store down: ${error?.name ?? 'resolved'} after ${Math.round(ms)} ms`);
      // ZooKeeper closes the session on this side (the server expires it); the others say why.
      if (error !== undefined) expectUnavailable(error, store);
      expect(ms).toBeLessThan(1500);
    } finally {
      await o.start();
    }
  });

  it(`100 retries of a wait leave no listener behind`, async () => {
    const locks = await open({ pollMs: 1, timeoutMs: 50 });
    await o.stop();
    try {
      const controller = new AbortController();
      const { peak, added } = await abortListeners(async (seen) => {
        const waiting = failure(locks.acquire('n', { signal: controller.signal, waitMs: 60_000 }));
        // Each retry's turn adds a listener to the wait's own signal: let 100 of them happen.
        for (let i = 0; i < 3000 && seen.added < 102; i++) await new Promise((r) => setTimeout(r, 10));
        // The acquire's own listener on the caller's signal, and nothing else.
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
        controller.abort(new Error('enough'));
        expect(await waiting).toMatchObject({ code: 'ERR_IDS_LOCK_ABORTED' });
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      });
      console.log(`${store}: ${added} abort listeners added over the retries, at most ${peak} on one signal`);
      expect(added).toBeGreaterThanOrEqual(100);
      expect(peak).toBeLessThanOrEqual(2);
    } finally {
      await o.start();
    }
  });
}

describe('redis down', () => {
  it('redisLocks() on a port nothing listens on: StoreUnavailableError within timeoutMs', async () => {
    const { error, ms } = await timed(
      redisLocks({ url: `redis://127.0.0.1:${await closedPort()}`, timeoutMs: 1000 }),
    );
    expectUnavailable(error, 'redis');
    expect(ms).toBeLessThan(1500);
  });

  const redis = serverForSuite(() => startRedis({ allowExternal: false }));
  storeDown('redis', {
    open: async (extra) => {
      const prefix = uniqueName('down');
      return redisLocks({ url: redis.server.url, prefix, ...extra });
    },
    stop: () => redis.server.stop(),
    start: () => redis.server.start(),
  });
});

describe('etcd down', () => {
  it('etcdLocks() on a port nothing listens on: StoreUnavailableError within timeoutMs', async () => {
    const { error, ms } = await timed(
      etcdLocks({ endpoints: [`http://127.0.0.1:${await closedPort()}`], timeoutMs: 1000 }),
    );
    expectUnavailable(error, 'etcd');
    expect(ms).toBeLessThan(1500);
  });

  const etcd = serverForSuite(startEtcd, { stop: (cluster) => cluster.stop() });
  storeDown('etcd', {
    open: (extra) =>
      etcdLocks({ endpoints: etcd.server.endpoints, prefix: `/${uniqueName('down')}/`, ...extra }),
    stop: () => (etcd.server.members[0] as { stop(): Promise<void> }).stop(),
    start: () => (etcd.server.members[0] as { start(): Promise<void> }).start(),
  });
});

describe.skipIf(!hasZookeeper())('zookeeper down', () => {
  it('zookeeperLocks() on a port nothing listens on: StoreUnavailableError within timeoutMs', async () => {
    const { error, ms } = await timed(
      zookeeperLocks({ connect: `127.0.0.1:${await closedPort()}`, timeoutMs: 1000 }),
    );
    expectUnavailable(error, 'zookeeper');
    expect(ms).toBeLessThan(1500);
  });

  const zk = serverForSuite(startZookeeper);
  storeDown('zookeeper', {
    open: (extra) =>
      zookeeperLocks({ connect: zk.server.connect, prefix: `/${uniqueName('down')}`, ...extra }),
    stop: () => zk.server.stop(),
    start: () => zk.server.start(),
  });
});
