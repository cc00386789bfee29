// A lock's lease keeper is started within half a keepalive interval of the grant, by one timer
// for all the locks of a Locks (KeeperStarts in locks.ts), not by a timer armed per acquire: on
// an injected clock, 100 uncontended acquire + release arm one timer in all and keep nothing
// behind, a lock held on is still kept alive (its first keepalive within an interval and a half
// of the grant, which moves its deadline), and a lock whose take was answered late, with less
// than half an interval of trust left, is started at once and fenced at its own deadline.
import { describe, expect, it } from 'vitest';
import type { Locks } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, FakeScheduler, redisForSuite, uniqueName, until, WAIT_MS } from './helpers.js';

describe('lease keepers of Redis locks, on an injected clock', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();

  /** Locks on `scheduler`, and the number of keepalives (extend calls) sent and confirmed so far. */
  async function open(
    scheduler: FakeScheduler,
    hooks: { beforeTake?: () => Promise<void>; extendAnswers?: () => boolean } = {},
  ): Promise<{ locks: Locks; extends: () => number; confirmed: () => number }> {
    const prefix = uniqueName('keeper-starts');
    await suite.admin.set(`{${prefix}}:epoch`, '0'); // a Redis that forgot nothing: no quarantine
    let sent = 0;
    let confirmed = 0;
    const locks = await redisLocks({
      url: suite.server.url,
      prefix,
      scheduler,
      onBackend: (backend: {
        extend: (...args: unknown[]) => Promise<void>;
        take: (...args: unknown[]) => Promise<unknown>;
      }) => {
        const extend = backend.extend.bind(backend);
        backend.extend = (...args: unknown[]) => {
          sent++;
          // A keepalive the store never answers, when the case asks for one.
          if (hooks.extendAnswers?.() === false) return new Promise<void>(() => undefined);
          return extend(...args).then(() => {
            confirmed++;
          });
        };
        const take = backend.take.bind(backend);
        backend.take = async (...args: unknown[]) => {
          await hooks.beforeTake?.();
          return take(...args);
        };
      },
    } as object);
    cleanup.push(() => locks.close());
    return { locks, extends: () => sent, confirmed: () => confirmed };
  }

  it('100 acquire + release arm one timer in all, and no keeper is started or kept for them', async () => {
    const scheduler = new FakeScheduler();
    const { locks, extends: sent } = await open(scheduler);
    const before = scheduler.requested.length;
    for (let i = 0; i < 100; i++) await (await locks.acquire('quick')).release();
    console.log(`100 acquire + release armed ${scheduler.requested.length - before} timer(s)`);
    expect(scheduler.requested.length - before).toBe(1);
    // The one timer fires and finds nothing to start: no beat, no keepalive, no timer after it.
    await scheduler.advance(10_000);
    expect(sent()).toBe(0);
    expect(scheduler.pending).toBe(0);
  });

  it('a lock held on gets its first keepalive within an interval and a half, which moves its deadline', async () => {
    const scheduler = new FakeScheduler();
    const { locks, extends: sent, confirmed } = await open(scheduler);
    // TTL 10 s: trusted for 8 s from the grant, a keepalive every 8/3 s.
    const lock = await locks.acquire('held', { ttlMs: 10_000 });
    const interval = 8000 / 3;
    await scheduler.advance(interval * 1.5);
    await until(() => sent() === 1, WAIT_MS, 'the first keepalive');
    // Confirmed (a real Redis answers it): the deadline is now 8 s after that keepalive was sent,
    // so the lock is still trusted past the grant's own deadline (8 s).
    await until(() => confirmed() === 1, WAIT_MS, 'the keepalive to be confirmed');
    await scheduler.advance(8000 - interval * 1.5 + 500);
    expect(lock.signal.aborted).toBe(false);
    expect(() => lock.check()).not.toThrow();
    await lock.release();
  });

  it('a lock answered near the end of its trust window is fenced at its deadline, not half an interval later', async () => {
    const scheduler = new FakeScheduler();
    // The take's answer comes 7.5 s after it was sent (a slow store, on the injected clock): of
    // the 8 s of trust (TTL 10 s), 0.5 s are left, less than the half interval (1.33 s) a
    // deferred keeper start could take; a keepalive is never answered.
    let slow = true;
    const { locks } = await open(scheduler, {
      beforeTake: async () => {
        if (slow) await scheduler.advance(7500);
        slow = false;
      },
      extendAnswers: () => false,
    });
    const lock = await locks.acquire('late', { ttlMs: 10_000 });
    expect(lock.signal.aborted).toBe(false);
    await scheduler.advance(400);
    expect(lock.signal.aborted).toBe(false);
    await scheduler.advance(200);
    expect(lock.signal.aborted).toBe(true);
    expect(() => lock.check()).toThrow();
    await lock.release();
  });
});
