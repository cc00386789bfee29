// Several processes on one machine-ID field in a real Redis: a holder paused past its TTL, and
// Redis restarted without persistence under two running holders. Every ID of every process is
// collected and compared.
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { describe, it } from 'vitest';
import { adminClient, freshPrefix, handOver, startIssuer, until, WAIT_MS } from './helpers.js';

describe.skipIf(!hasRedis())('processes sharing a one-ID field in a real Redis', () => {
  // A Redis of the file's own, never one from REDIS_URL: the last test restarts it.
  const redis = serverForSuite(() => startRedis({ allowExternal: false }));

  it('a holder SIGSTOPped past the TTL issues nothing after it resumes, while another process claims the ID and issues: 0 duplicates', async () => {
    const prefix = freshPrefix('sigstop');
    await handOver(() => startIssuer(redis.server.url, prefix));
  });

  it('Redis restarted without persistence under two running processes: their issuing windows for the one ID never overlap', async () => {
    const prefix = freshPrefix('forget');
    await handOver(() => startIssuer(redis.server.url, prefix), {
      label: 'forgetting Redis',
      // Forget everything at once, while A is paused for a moment (a GC pause, a slow disk): B,
      // retrying every 50 ms, claims the ID in the empty Redis while A still trusts its claim
      // (its deadline has not passed). Without the rule, B would issue at once beside A.
      async cut(a) {
        a.child.kill('SIGSTOP');
        await redis.server.kill();
        await redis.server.start();
        // A resumes once B's claim is in: resumed earlier, A may reconnect and take the ID back
        // first (a busy machine can delay B's next attempt by seconds), and B would never issue.
        const admin = adminClient(redis.server.url);
        const key = `{${prefix}}:0`;
        try {
          await until(
            async () => (await admin.exists(key)) === 1,
            WAIT_MS,
            "B's claim in the restarted Redis",
          );
        } finally {
          admin.disconnect();
        }
        a.child.kill('SIGCONT');
        return undefined;
      },
      runOnMs: 500, // A runs on for a while: fenced, it issues nothing
    });
  });
});
