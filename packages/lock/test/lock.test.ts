// The lock's API on a real Redis: bad input, fences, FIFO waits, the deadline on an injected clock.
import { describe, expect, it } from 'vitest';
import { etcdLocks } from '../src/etcd.js';
import { compareFences, type Locks } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { abortsAtDeadline } from './cases.js';
import {
  cleanupAfterEach,
  FakeScheduler,
  failure,
  redisForSuite,
  uniqueName,
  until,
  WAIT_MS,
} from './helpers.js';

describe('locks on Redis', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();

  async function open(extra: object = {}): Promise<Locks> {
    const prefix = uniqueName('lock');
    // An epoch long past: this Redis forgot nothing, so new names need no quarantine (see TAKE).
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: suite.server.url, prefix, ...extra });
    cleanup.push(() => locks.close());
    return locks;
  }

  describe('bad input: a typed error saying what was expected and received', () => {
    const cases: [string, () => [string, object]][] = [
      ['an empty name', () => ['', {}]],
      ['a name past 512 bytes', () => ['x'.repeat(513), {}]],
      ['a name with the key separator', () => ['orders/42', {}]],
      ['a name with a control character', () => ['a\nb', {}]],
      ['ttlMs 0', () => ['n', { ttlMs: 0 }]],
      ['ttlMs negative', () => ['n', { ttlMs: -5 }]],
      ['ttlMs NaN', () => ['n', { ttlMs: Number.NaN }]],
      ['ttlMs past the timer maximum', () => ['n', { ttlMs: 2 ** 31 }]],
      ['waitMs negative', () => ['n', { waitMs: -1 }]],
      ['waitMs fractional', () => ['n', { waitMs: 1.5 }]],
      ['waitMs past the timer maximum', () => ['n', { waitMs: 2 ** 31 }]],
      ['a signal that is not an AbortSignal', () => ['n', { signal: {} }]],
    ];
    for (const [what, make] of cases) {
      it(what, async () => {
        const locks = await open();
        const [name, options] = make();
        const error = await failure(locks.acquire(name, options));
        expect(error).toMatchObject({ name: 'InvalidArgumentError', code: 'ERR_IDS_INVALID_ARGUMENT' });
        expect(error.message).toMatch(/expected .+ received /);
      });
    }

    it.each([
      [
        'redisLocks pollMs 0',
        () => redisLocks({ url: suite.server.url, pollMs: 0 }),
        /pollMs: expected an integer from 1/,
      ],
      [
        'redisLocks timeoutMs NaN',
        () => redisLocks({ url: suite.server.url, timeoutMs: Number.NaN }),
        /timeoutMs: expected .* received NaN/,
      ],
      [
        'redisLocks prefix with a brace',
        () => redisLocks({ url: suite.server.url, prefix: 'a{b' }),
        /prefix: expected .* received "a\{b"/,
      ],
      [
        'etcdLocks prefix without a slash',
        () => etcdLocks({ prefix: 'locks' }),
        /prefix: expected a string ending in "\/", received "locks"/,
      ],
      ['etcdLocks timeoutMs 0', () => etcdLocks({ timeoutMs: 0 }), /timeoutMs: expected an integer from 1/],
    ])('%s', async (_what, open, message) => {
      const error = await failure(open());
      expect(error).toMatchObject({ code: 'ERR_IDS_INVALID_ARGUMENT' });
      expect(error.message).toMatch(message);
    });

    it('a released lock used again', async () => {
      const locks = await open();
      const lock = await locks.acquire('n');
      await lock.release();
      await lock.release(); // idempotent
      expect(() => lock.fence).toThrow(expect.objectContaining({ code: 'ERR_IDS_LOCK_RELEASED' }));
      expect(() => lock.check()).toThrow(/expected a held lock, received a released one/);
    });

    it('fences of different names compared', async () => {
      const locks = await open();
      const a = await locks.acquire('a');
      const b = await locks.acquire('b');
      expect(() => compareFences(a, b)).toThrow(
        expect.objectContaining({
          code: 'ERR_IDS_LOCK_FENCE_NAMES',
          message: expect.stringMatching(/expected .+ received "a" and "b"/),
        }),
      );
      await a.release();
      await b.release();
    });
  });

  it('fences strictly increase across holders; tryAcquire refuses while held; await using releases', async () => {
    const prefix = uniqueName('fences');
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: suite.server.url, prefix });
    cleanup.push(() => locks.close());
    const fences: bigint[] = [];
    for (let i = 0; i < 5; i++) {
      await using lock = await locks.acquire('orders:42');
      fences.push(lock.fence);
      expect(await locks.tryAcquire('orders:42')).toBeUndefined();
      // A refused tryAcquire leaves no place in line behind it.
      expect(await suite.admin.zcard(`{${prefix}}:queue:orders:42`)).toBe(0);
    }
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1] as bigint);
    const again = await locks.tryAcquire('orders:42');
    expect(again?.fence).toBeGreaterThan(fences[4] as bigint);
    await again?.release();
  });

  it('waiters are served first come, first served, each woken by the release before it', async () => {
    const prefix = uniqueName('fifo');
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    // No fallback poll: only releases wake.
    const locks = await redisLocks({ url: suite.server.url, prefix, pollMs: 2 ** 31 - 1 });
    cleanup.push(() => locks.close());
    const first = await locks.acquire('q');
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      waiters.push(
        locks.acquire('q', { waitMs: WAIT_MS }).then(async (lock) => {
          order.push(i);
          await lock.release();
        }),
      );
      // Each joins the line before the next one asks.
      await until(
        async () => (await suite.admin.zcard(`{${prefix}}:queue:q`)) === i + 1,
        WAIT_MS,
        `waiter ${i} in line`,
      );
    }
    await first.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('withLock releases when fn throws', async () => {
    const locks = await open();
    await expect(locks.withLock('w', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const lock = await locks.tryAcquire('w');
    expect(lock).toBeDefined();
    await lock?.release();
  });

  describe('on an injected clock', () => {
    it('waitMs ends a wait with LockTimeoutError when the clock reaches it, not before', async () => {
      const scheduler = new FakeScheduler();
      const locks = await open({ scheduler });
      const held = await locks.acquire('t');
      let settled = false;
      const waiting = failure(locks.acquire('t', { waitMs: 5000 })).finally(() => {
        settled = true;
      });
      await scheduler.advance(4999);
      expect(settled).toBe(false);
      await scheduler.advance(1);
      expect(await waiting).toMatchObject({ code: 'ERR_IDS_LOCK_TIMEOUT', lockName: 't', waitMs: 5000 });
      await held.release();
    });

    it('signal ends a wait with LockAbortedError', async () => {
      const locks = await open();
      const held = await locks.acquire('s');
      const controller = new AbortController();
      const waiting = failure(locks.acquire('s', { signal: controller.signal }));
      controller.abort(new Error('shutting down'));
      expect(await waiting).toMatchObject({
        code: 'ERR_IDS_LOCK_ABORTED',
        cause: { message: 'shutting down' },
      });
      await held.release();
    });

    it('signal aborts at TTL minus the fencing margin after the last confirmed keepalive, not before', async () => {
      const scheduler = new FakeScheduler();
      const locks = await open({ scheduler });
      // Keepalives go unanswered while Redis is stopped: only the deadline can decide.
      await abortsAtDeadline(locks, scheduler, suite.server, 'redis');
    });
  });
});
