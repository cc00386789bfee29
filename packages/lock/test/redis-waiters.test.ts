// Issue 34: every process hears every release on the prefix's channel, and the Redis backend kept
// each token a release named as next, its own or not, until that token's waiter took or left:
// the tokens of other processes' waiters were never removed, so a long-lived process grew for
// as long as other processes used the locks. It keeps only its own now.
import { describe, expect, it } from 'vitest';
import type { Locks } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, redisForSuite, uniqueName } from './helpers.js';

describe('what the Redis backend keeps per waiter', () => {
  const redis = redisForSuite();
  const cleanup = cleanupAfterEach();

  async function open(prefix: string, seen?: (backend: { kept(): number }) => void): Promise<Locks> {
    // A long poll, so that every wait below ends by a release's message, not by polling.
    const locks = await redisLocks({
      url: redis.server.url,
      prefix,
      pollMs: 60_000,
      ...(seen ? { onBackend: seen } : {}),
    } as object);
    cleanup.push(() => locks.close());
    return locks;
  }

  /** `holder` holds `name`; `waiter` queues for it and is handed it when `holder` releases. */
  async function handOff(prefix: string, holder: Locks, waiter: Locks, name: string): Promise<void> {
    const first = await holder.acquire(name, { ttlMs: 10_000 });
    const second = waiter.acquire(name, { ttlMs: 10_000, waitMs: 30_000 });
    // The waiter stands in line before the holder lets go.
    while (!(await redis.admin.exists(`{${prefix}}:queue:${name}`))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await first.release();
    await (await second).release();
  }

  it('hearing 30 hand-offs between other processes, a process keeps nothing for them', async () => {
    const prefix = uniqueName('kept');
    const others = [await open(prefix), await open(prefix)] as const;
    let backend: { kept(): number } | undefined;
    const listener = await open(prefix, (b) => {
      backend = b;
    });
    for (let i = 0; i < 30; i++) await handOff(prefix, others[0], others[1], 'busy');
    // The listener's own hand-off comes after every message above on its subscriber connection
    // (a channel's messages arrive in order), so by its end every one of them was heard.
    await handOff(prefix, others[0], listener, 'own');
    expect(backend?.kept()).toBe(0);
  });
});
