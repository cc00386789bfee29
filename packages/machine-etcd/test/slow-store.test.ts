// Issue 33 on a real etcd: answers held back 1 s (an etcd keepalive waits for about two answers,
// so the holder fences and its recovery is confirmed too late to trust), then etcd killed, then
// the holder cut off while a successor claims. Before the fix the recovered claim was never
// fenced again: 36,668 duplicate IDs.
import { hasEtcd, startEtcd, TcpProxy } from '@ids/test-services';
import { describe, it } from 'vitest';
import { freshPrefix, SLOW_STORE_LEASE, slowStoreFault, spawnIssuer } from './helpers.js';

describe.skipIf(!hasEtcd())('an etcd that answers slowly, then fails', () => {
  it('answers 1 s late, then killed for 12 s, then the holder cut off: nothing issued in the dark, 0 duplicates', async () => {
    const etcd = await startEtcd();
    const member = etcd.members[0]!;
    const proxy = await TcpProxy.start(member.clientUrl);
    try {
      const prefix = freshPrefix('slow-store');
      const issuer = (endpoint: string) => () =>
        spawnIssuer(__dirname, ['fixed', endpoint, prefix], SLOW_STORE_LEASE);
      await slowStoreFault(issuer(proxy.url), issuer(member.clientUrl), {
        label: 'etcd',
        proxy,
        delayMs: 1000,
        down: () => member.kill(),
        up: () => member.start(),
      });
    } finally {
      await proxy.close();
      await etcd.stop();
    }
  }, 240_000);
});
