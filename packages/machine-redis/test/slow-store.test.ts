// Issue 33 on a real Redis: answers held back past the trust window (the holder fences, and its
// recovery is confirmed too late to trust), then redis-server SIGSTOPped, then the holder cut off
// while a successor claims. Before the fix the recovered claim was never fenced again: 37,690
// duplicate IDs.
import { hasRedis, startRedis, TcpProxy } from '@ids/test-services';
import { describe, it } from 'vitest';
import { freshPrefix, SLOW_STORE_LEASE, slowStoreFault, spawnIssuer } from './helpers.js';

describe.skipIf(!hasRedis())('a Redis that answers slowly, then fails', () => {
  it('answers 2.6 s late, then SIGSTOPped for 12 s, then the holder cut off: nothing issued in the dark, 0 duplicates', async () => {
    const redis = await startRedis({ allowExternal: false });
    const proxy = await TcpProxy.start(`127.0.0.1:${redis.port}`);
    try {
      const prefix = freshPrefix('slow-store');
      const issuer = (url: string) => () =>
        spawnIssuer(__dirname, [url, prefix, SLOW_STORE_LEASE.ttlSeconds, 0], SLOW_STORE_LEASE);
      await slowStoreFault(issuer(`redis://127.0.0.1:${new URL(proxy.url).port}`), issuer(redis.url), {
        label: 'Redis',
        proxy,
        delayMs: 2600,
        down: async () => redis.pause(),
        up: async () => redis.resume(),
      });
    } finally {
      await proxy.close();
      await redis.close();
    }
  }, 240_000);
});
