// The locks on a real etcd: fences are create revisions, waits are FIFO on the predecessor's
// delete, and a holder SIGSTOPped past its TTL is fenced out.
import { serverForSuite, startEtcd } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { etcdLocks } from '../src/etcd.js';
import { pausedHolderFenced, waitersServedInOrder } from './cases.js';
import { redisForSuite, uniqueName } from './helpers.js';

describe('locks on etcd', () => {
  const etcd = serverForSuite(startEtcd, { stop: (cluster) => cluster.stop() });
  const redis = redisForSuite(); // the protected resource of the fencing test

  it('fences strictly increase; tryAcquire refuses while held; waiters are served in order', async () => {
    const prefix = `/${uniqueName('lock')}/`;
    // No fallback poll: only the predecessor's delete wakes a waiter.
    const locks = await etcdLocks({ endpoints: etcd.server.endpoints, prefix, pollMs: 2 ** 31 - 1 });
    const admin = new Etcd3({ hosts: etcd.server.endpoints });
    try {
      // Each waiter's key is in line before the next one joins: etcd shows it.
      await waitersServedInOrder(
        locks,
        async (n) => (await admin.getAll().prefix(`${prefix}orders:42/`).keys()).length === n,
      );
    } finally {
      admin.close();
      await locks.close();
    }
  });

  it('a holder paused past its TTL: higher next fence, signal aborted, late write refused', async () => {
    const prefix = `/${uniqueName('fencing')}/`;
    await pausedHolderFenced({
      store: 'etcd',
      endpoint: etcd.server.endpoints[0] as string,
      prefix,
      guard: redis,
      open: () => etcdLocks({ endpoints: etcd.server.endpoints, prefix }),
      kinds: 'deadline|lease-expired|keepalive-failed',
      // The resumed holder released on the way out: its own lease only, not the next holder's key.
      nextAlone: async () => {
        const admin = new Etcd3({ hosts: etcd.server.endpoints });
        expect(await admin.getAll().prefix(`${prefix}orders:42/`).keys()).toHaveLength(1);
        admin.close();
      },
    });
  });
});
