// Kleppmann's case: a holder paused (SIGSTOP) past its TTL. The next holder gets a higher fence;
// the paused one, resumed, finds its signal aborted and its late guarded write refused.

import { describe, expect, it } from 'vitest';
import { fencedSet } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { fixture, redisForSuite, uniqueName, WAIT_MS } from './helpers.js';

const TTL_MS = 2000;

describe('a holder paused past its TTL (Redis)', () => {
  const suite = redisForSuite();

  it('the next holder has a higher fence; the resumed holder is aborted and its write refused', async () => {
    const prefix = uniqueName('fencing');
    const key = `${prefix}:resource`;
    const paused = fixture('holder.mjs', [
      'redis',
      suite.server.url,
      prefix,
      'orders:42',
      String(TTL_MS),
      suite.server.url,
      key,
    ]);
    const first = BigInt((await paused.line(/^held /)).slice(5));
    paused.child.kill('SIGSTOP');
    const locks = await redisLocks({ url: suite.server.url, prefix });
    try {
      // Waits, event-driven, until the paused holder's key expires (its TTL, on Redis's clock).
      const next = await locks.acquire('orders:42', { ttlMs: TTL_MS, waitMs: WAIT_MS });
      expect(next.fence).toBeGreaterThan(first);
      expect(await fencedSet(suite.admin, key, next.fence, 'next')).toBe(true);
      paused.child.kill('SIGCONT');
      paused.child.stdin!.end('write\n');
      expect(await paused.line(/^aborted /)).toMatch(
        /^aborted true LeaseLostError redis (deadline|key-lost|keepalive-failed) wrote false$/,
      );
      expect(await suite.admin.get(key)).toBe('next');
      // The resumed holder released its lock on the way out: a compare-and-delete that left the
      // next holder's lock alone.
      expect(await paused.exited).toBe(0);
      expect(await suite.admin.exists(`{${prefix}}:held:orders:42`)).toBe(1);
      expect(() => next.check()).not.toThrow();
      await next.release();
      expect(await suite.admin.exists(`{${prefix}}:held:orders:42`)).toBe(0);
    } finally {
      paused.child.kill('SIGCONT');
      paused.child.kill('SIGKILL');
      await locks.close();
    }
  });
});
