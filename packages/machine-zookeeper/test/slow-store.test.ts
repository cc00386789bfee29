// Issue 33 on a real ZooKeeper: answers held back past the trust window (the holder fences, and
// its recovery is confirmed too late to trust), then the server killed, then the holder cut off
// while a successor claims. Before the fix the recovered claim was never fenced again: 29,724 to
// 37,069 duplicate IDs per run.
import { hasZookeeper, startZookeeper, TcpProxy } from '@ids/test-services';
import { describe, it } from 'vitest';
import { freshPath, SLOW_STORE_LEASE, slowStoreFault, spawnIssuer } from './helpers.js';

describe.skipIf(!hasZookeeper())('a ZooKeeper that answers slowly, then fails', () => {
  it('answers 2.6 s late, then killed for 12 s, then the holder cut off: nothing issued in the dark, 0 duplicates', async () => {
    const zk = await startZookeeper();
    const proxy = await TcpProxy.start(zk.connect);
    try {
      const path = freshPath('slow-store');
      const issuer = (connect: string) => () =>
        spawnIssuer(__dirname, [connect, path, SLOW_STORE_LEASE.ttlSeconds, 0], SLOW_STORE_LEASE);
      await slowStoreFault(issuer(`127.0.0.1:${new URL(proxy.url).port}`), issuer(zk.connect), {
        label: 'ZooKeeper',
        proxy,
        delayMs: 2600,
        down: () => zk.kill(),
        up: () => zk.start(),
      });
    } finally {
      await proxy.close();
      await zk.close();
    }
  }, 240_000);
});
