// A release (and a waiter leaving) publishes the next waiter's token on `{P}:released` as
// `N/<token>`, with the channel and the name read inside the script from the held key's name
// `{P}:held:N` (redis-scripts.ts: a release sends only its keys and its token). Names that hold
// a brace or the text ":held:" must still wake the right waiter; the waiters here have no
// fallback poll, so only the message can wake them.
import { describe, expect, it } from 'vitest';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, redisForSuite, uniqueName, WAIT_MS } from './helpers.js';

const NO_POLL = 2 ** 31 - 1;

describe('the Redis release message', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();

  for (const name of ['plain', 'a}b{c', 'x:held:y', '}:held:{']) {
    it(
      `names the next waiter of ${JSON.stringify(name)}: a waiter leaves the line, the release wakes the one behind`,
      async () => {
        const prefix = uniqueName('wake');
        await suite.admin.set(`{${prefix}}:epoch`, '0');
        const open = async () => {
          const locks = await redisLocks({ url: suite.server.url, prefix, pollMs: NO_POLL });
          cleanup.push(() => locks.close());
          return locks;
        };
        const holder = await open();
        const first = await open();
        const second = await open();
        const queue = `{${prefix}}:queue:${name}`;

        const held = await holder.acquire(name);
        // `first` stands in line, then `second` behind it.
        const leaving = new AbortController();
        const firstWait = first.acquire(name, { signal: leaving.signal }).catch((error: unknown) => error);
        await expect.poll(() => suite.admin.zcard(queue), { timeout: WAIT_MS }).toBe(1);
        const secondWait = second.acquire(name);
        await expect.poll(() => suite.admin.zcard(queue), { timeout: WAIT_MS }).toBe(2);

        // The head leaves (LEAVE) while the lock is held: its place goes, nothing is woken. Then
        // the release names `second`, now at the head, and only that message can wake it.
        leaving.abort();
        expect(await firstWait).toHaveProperty('name', 'LockAbortedError');
        expect(await suite.admin.zcard(queue)).toBe(1);
        const fence = held.fence;
        await held.release();
        const next = await secondWait;
        expect(next.fence).toBeGreaterThan(fence);
        await next.release();
      },
      WAIT_MS * 3,
    );
  }
});
