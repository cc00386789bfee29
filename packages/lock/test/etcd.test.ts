// The locks on a real etcd: fences are create revisions, waits are FIFO on the predecessor's
// delete, and a holder SIGSTOPped past its TTL is fenced out.
import { serverForSuite, startEtcd } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { etcdLocks } from '../src/etcd.js';
import { fencedSet } from '../src/index.js';
import { fixture, redisForSuite, uniqueName, until, WAIT_MS } from './helpers.js';

describe('locks on etcd', () => {
  const etcd = serverForSuite(startEtcd, { stop: (cluster) => cluster.stop() });
  const redis = redisForSuite(); // the protected resource of the fencing test

  it('fences strictly increase; tryAcquire refuses while held; waiters are served in order', async () => {
    const prefix = `/${uniqueName('lock')}/`;
    // No fallback poll: only the predecessor's delete wakes a waiter.
    const locks = await etcdLocks({ endpoints: etcd.server.endpoints, prefix, pollMs: 2 ** 31 - 1 });
    const admin = new Etcd3({ hosts: etcd.server.endpoints });
    try {
      const first = await locks.acquire('orders:42', { ttlMs: 5000 });
      expect(await locks.tryAcquire('orders:42', { ttlMs: 5000 })).toBeUndefined();
      const order: number[] = [];
      const fences: bigint[] = [first.fence];
      const waiters: Promise<void>[] = [];
      for (let i = 0; i < 4; i++) {
        waiters.push(
          locks.acquire('orders:42', { ttlMs: 5000, waitMs: WAIT_MS }).then(async (lock) => {
            order.push(i);
            fences.push(lock.fence);
            await lock.release();
          }),
        );
        // Each waiter's key is in line before the next one joins: wait until etcd shows it.
        const dir = `${prefix}orders:42/`;
        await until(
          async () => (await admin.getAll().prefix(dir).keys()).length === i + 2,
          WAIT_MS,
          `waiter ${i} in line`,
        );
      }
      await first.release();
      await Promise.all(waiters);
      expect(order).toEqual([0, 1, 2, 3]);
      for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1] as bigint);
    } finally {
      admin.close();
      await locks.close();
    }
  });

  it('a holder paused past its TTL: higher next fence, signal aborted, late write refused', async () => {
    const prefix = `/${uniqueName('fencing')}/`;
    const key = `${prefix}resource`;
    const paused = fixture('holder.mjs', [
      'etcd',
      etcd.server.endpoints[0] as string,
      prefix,
      'orders:42',
      '2000',
      redis.server.url,
      key,
    ]);
    const locks = await etcdLocks({ endpoints: etcd.server.endpoints, prefix });
    try {
      const first = BigInt((await paused.line(/^held /)).slice(5));
      paused.child.kill('SIGSTOP');
      const next = await locks.acquire('orders:42', { ttlMs: 2000, waitMs: WAIT_MS });
      expect(next.fence).toBeGreaterThan(first);
      expect(await fencedSet(redis.admin, key, next.fence, 'next')).toBe(true);
      paused.child.kill('SIGCONT');
      paused.child.stdin!.end('write\n');
      expect(await paused.line(/^aborted /)).toMatch(
        /^aborted true LeaseLostError etcd (deadline|lease-expired|keepalive-failed) wrote false$/,
      );
      expect(await redis.admin.get(key)).toBe('next');
      // The resumed holder released on the way out: its own lease only, not the next holder's key.
      expect(await paused.exited).toBe(0);
      const admin = new Etcd3({ hosts: etcd.server.endpoints });
      expect(await admin.getAll().prefix(`${prefix}orders:42/`).keys()).toHaveLength(1);
      admin.close();
      expect(() => next.check()).not.toThrow();
      await next.release();
    } finally {
      paused.child.kill('SIGCONT');
      paused.child.kill('SIGKILL');
      await locks.close();
    }
  });
});
