// The locks on a real ZooKeeper: N processes counting under the lock, fences that are czxids,
// FIFO waits on the predecessor's delete, a holder SIGSTOPped past its session timeout, the
// ends of a wait, and a create retried after its answer was lost.

import { ZkSession } from '@ids/machine-zookeeper/internal';
import { hasZookeeper, serverForSuite, startZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { zookeeperForSuite } from '../../machine-zookeeper/test/helpers.js';
import { StoreUnavailableError } from '../src/index.js';
import { type ZookeeperLocksOptions, zookeeperLocks } from '../src/zookeeper.js';
import { abortsAtDeadline, pausedHolderFenced, waitersServedInOrder } from './cases.js';
import {
  type Child,
  FakeScheduler,
  failure,
  fixture,
  redisForSuite,
  uniqueName,
  until,
  WAIT_MS,
} from './helpers.js';

const PROCESSES = 8;
const EACH = 125;

describe.skipIf(!hasZookeeper())('locks on ZooKeeper', () => {
  const redis = redisForSuite(); // the counter's value, and the protected resource of the fencing test
  const zk = zookeeperForSuite();

  const fresh = (name: string) => `/${uniqueName(name)}`;
  const open = (prefix: string, extra: Partial<ZookeeperLocksOptions> & object = {}) =>
    zookeeperLocks({ connect: zk.server.connect, prefix, ...extra });
  const line = async (dir: string) => (await zk.admin.getChildren(dir)) ?? [];

  it(`${PROCESSES} processes x ${EACH} read-modify-write increments under the lock: the exact total`, async () => {
    const prefix = fresh('counter');
    const key = `${prefix}:value`;
    const children: Child[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      children.push(
        fixture('counter.mjs', [
          redis.server.url,
          prefix,
          'counter',
          key,
          String(EACH),
          'locked',
          'zookeeper',
          zk.server.connect,
        ]),
      );
    }
    await Promise.all(children.map((c) => c.line('ready')));
    for (const c of children) c.child.stdin!.end('go\n');
    await Promise.all(children.map((c) => c.line('done')));
    expect(await Promise.all(children.map((c) => c.exited))).toEqual(Array(PROCESSES).fill(0));
    expect(Number(await redis.admin.get(key))).toBe(PROCESSES * EACH);
    // Every acquire's node went with its session.
    expect(await line(`${prefix}/counter`)).toEqual([]);
  });

  it('fences are czxids and strictly increase; tryAcquire refuses while held; waiters are served in order', async () => {
    const prefix = fresh('lock');
    // No fallback poll: only the predecessor's delete wakes a waiter.
    const locks = await open(prefix, { pollMs: 2 ** 31 - 1 });
    const dir = `${prefix}/orders:42`;
    try {
      // Each waiter's node is in line before the next one joins.
      await waitersServedInOrder(
        locks,
        async (n) => (await line(dir)).length === n,
        async (first) => {
          const [node] = await line(dir);
          expect(first.fence).toBe(BigInt(`0x${(await zk.admin.exists(`${dir}/${node}`))?.czxid}`));
          expect(await line(dir)).toHaveLength(1); // the refused attempt's node went with its session
        },
      );
      expect(await line(dir)).toEqual([]);
    } finally {
      await locks.close();
    }
  });

  it('a holder paused past its session timeout: higher next fence, signal aborted, late write refused', async () => {
    const prefix = fresh('fencing');
    // The next acquire waits on the predecessor's watch until the server expires the paused
    // one's session.
    await pausedHolderFenced({
      store: 'zookeeper',
      endpoint: zk.server.connect,
      prefix,
      guard: redis,
      open: () => open(prefix),
      kinds: 'deadline|lease-expired|keepalive-failed|key-lost',
      // The resumed holder released on the way out: its own session only, not the next holder's node.
      nextAlone: async () => expect(await line(`${prefix}/orders:42`)).toHaveLength(1),
    });
  });

  it('waitMs (on the injected clock) and signal end a wait with the typed error, and the waiter leaves the line', async () => {
    const prefix = fresh('wait');
    const scheduler = new FakeScheduler();
    // No fallback poll: only the clock or the signal can end these waits.
    const locks = await open(prefix, { pollMs: 2 ** 31 - 1, scheduler } as object);
    const dir = `${prefix}/w`;
    try {
      const held = await locks.acquire('w');
      let settled = false;
      const timing = failure(locks.acquire('w', { waitMs: 5000 })).finally(() => {
        settled = true;
      });
      await until(async () => (await line(dir)).length === 2, WAIT_MS, 'the waiter in line');
      await scheduler.advance(4999);
      expect(settled).toBe(false);
      await scheduler.advance(1);
      expect(await timing).toMatchObject({ code: 'ERR_IDS_LOCK_TIMEOUT', lockName: 'w', waitMs: 5000 });
      expect(await line(dir)).toHaveLength(1);

      const controller = new AbortController();
      const aborting = failure(locks.acquire('w', { signal: controller.signal }));
      await until(async () => (await line(dir)).length === 2, WAIT_MS, 'the waiter in line');
      controller.abort(new Error('shutting down'));
      expect(await aborting).toMatchObject({
        code: 'ERR_IDS_LOCK_ABORTED',
        cause: { message: 'shutting down' },
      });
      expect(await line(dir)).toHaveLength(1);
      await held.release();
    } finally {
      await locks.close();
    }
  });

  it('signal aborts at the session timeout minus the fencing margin after the last confirmed keepalive', async () => {
    const scheduler = new FakeScheduler();
    const locks = await open(fresh('deadline'), { scheduler } as object);
    try {
      // Keepalives go unanswered while the server is stopped: only the deadline can decide.
      await abortsAtDeadline(locks, scheduler, zk.server, 'zookeeper');
    } finally {
      await locks.close();
    }
  });

  it('a create retried after its answer was lost finds its node: no orphan ahead of itself', async () => {
    const prefix = fresh('orphan');
    const guardFailed = new AbortController();
    let creates = 0;
    // The fault, at the client seam: the first create reaches the server, its answer does not.
    const openSession = async (...args: Parameters<typeof ZkSession.open>) => {
      const session = await ZkSession.open(...args);
      const create = session.create.bind(session);
      session.create = async (...a: Parameters<ZkSession['create']>) => {
        creates++;
        if (creates > 1) guardFailed.abort(new Error('a second create was sent for one acquire'));
        const made = await create(...a);
        if (creates === 1) {
          throw new StoreUnavailableError(
            'zookeeper',
            'lock',
            `creating ${made}: connection lost (injected)`,
          );
        }
        return made;
      };
      return session;
    };
    const locks = await open(prefix, { pollMs: 10, openSession } as object);
    try {
      const lock = await locks.acquire('o', { ttlMs: 5000, signal: guardFailed.signal });
      expect(creates).toBe(1);
      const nodes = await line(`${prefix}/o`);
      expect(nodes).toHaveLength(1);
      expect(lock.fence).toBe(BigInt(`0x${(await zk.admin.exists(`${prefix}/o/${nodes[0]}`))?.czxid}`));
      await lock.release();
      expect(await line(`${prefix}/o`)).toEqual([]);
    } finally {
      await locks.close();
    }
  });

  it('a lock node (or the prefix) deleted by an operator is made again at the next acquire', async () => {
    const prefix = fresh('heal');
    const locks = await open(prefix);
    try {
      const first = await locks.acquire('ops', { waitMs: WAIT_MS });
      const fence = first.fence;
      await first.release();
      // An operator tidies up the empty node of the name, as `deleteall` of old names would.
      await zk.admin.remove(`${prefix}/ops`, -1);
      const second = await locks.acquire('ops', { waitMs: WAIT_MS });
      expect(second.fence).toBeGreaterThan(fence);
      expect(await line(`${prefix}/ops`)).toHaveLength(1);
      const secondFence = second.fence;
      await second.release();
      // The whole prefix, too.
      await zk.admin.remove(`${prefix}/ops`, -1);
      await zk.admin.remove(prefix, -1);
      const third = await locks.acquire('ops', { waitMs: WAIT_MS });
      expect(third.fence).toBeGreaterThan(secondFence);
      await third.release();
    } finally {
      await locks.close();
    }
  });

  it('a ttlMs above what the server grants, and a name that is no path segment, are refused', async () => {
    const locks = await open(fresh('ttl'));
    try {
      for (const name of ['.', '..']) {
        expect(await failure(locks.acquire(name))).toMatchObject({
          code: 'ERR_IDS_INVALID_ARGUMENT',
          option: 'name',
        });
      }
      expect(await failure(locks.acquire('t', { ttlMs: 600_000 }))).toMatchObject({
        code: 'ERR_IDS_INVALID_ARGUMENT',
        option: 'ttlMs',
      });
    } finally {
      await locks.close();
    }
  });
});

// Issue 33 item 4: zookeeperLocks reads `connect` with machine-zookeeper's parser and dials
// through its ZkSession; a bracketed IPv6 server was dialled as host `[` there too.
describe.skipIf(!hasZookeeper())('locks on a ZooKeeper listening on ::1 only', () => {
  const zk6 = serverForSuite(() => startZookeeper({ host: '::1', allowExternal: false }));

  it('[::1]:<port>: a lock is taken, refused to a second taker while held, and taken again once released', async () => {
    expect(zk6.server.connect).toMatch(/^\[::1\]:\d+$/);
    const locks = await zookeeperLocks({ connect: zk6.server.connect, prefix: `/${uniqueName('ipv6')}` });
    try {
      // One attempt: a server the client cannot reach fails it within timeoutMs (acquire would
      // go on trying).
      const first = await locks.tryAcquire('orders:42');
      if (first === undefined) throw new Error('expected the lock, it was refused');
      const fence = first.fence;
      expect(await locks.tryAcquire('orders:42')).toBeUndefined();
      await first.release();
      const second = await locks.acquire('orders:42');
      expect(second.fence).toBeGreaterThan(fence);
      await second.release();
    } finally {
      await locks.close();
    }
  });
});
