// A take that the store answers after the lease's trust window (TTL minus a fifth, counted from
// the request): the keeper is fenced at its very start, and such a lock must never reach the
// caller (issue 33's rule, applied to locks: nothing is handed out on a lease not trusted).
import { StoreUnavailableError } from '@ids/machine-lease/errors';
import { hasRedis, TcpProxy } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, failure, redisForSuite, uniqueName, until } from './helpers.js';

describe.skipIf(!hasRedis())('a take answered after its trust window (Redis behind a delaying proxy)', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();

  it('is released, not handed out: tryAcquire and acquire fail typed, and the name is free again', async () => {
    const proxy = await TcpProxy.start(`127.0.0.1:${suite.server.port}`);
    cleanup.push(() => proxy.close());
    const prefix = uniqueName('slow-answer');
    await suite.admin.set(`{${prefix}}:epoch`, '0'); // a Redis that forgot nothing: no quarantine
    const locks = await redisLocks({ url: `redis://127.0.0.1:${new URL(proxy.url).port}`, prefix });
    cleanup.push(() => locks.close());
    // A 1 s lease is trusted 800 ms from the request; every answer now comes 900 ms after it.
    proxy.delayAnswers(900);
    const once = await failure(locks.tryAcquire('slow', { ttlMs: 1000 }));
    expect(once).toBeInstanceOf(StoreUnavailableError);
    expect(once.message).toMatch(/after the lease's trust window .* the lock was released, not handed out/);
    const waited = await failure(locks.acquire('slow', { ttlMs: 1000, waitMs: 2500 }));
    expect(waited).toBeInstanceOf(StoreUnavailableError);
    expect(waited.message).toMatch(/not taken within waitMs = 2500 ms: expected the store to answer/);
    proxy.delayAnswers(0);
    // A take still on the wire when waitMs ran out is released once its (late) answer lands: the
    // name comes free within a few answers, never left to its TTL... nor held by nobody.
    let lock: Awaited<ReturnType<typeof locks.tryAcquire>>;
    await until(
      async () => {
        lock = await locks.tryAcquire('slow', { ttlMs: 1000 });
        return lock !== undefined;
      },
      10_000,
      'the name to come free',
    );
    lock!.check();
    await lock!.release();
  });
});
