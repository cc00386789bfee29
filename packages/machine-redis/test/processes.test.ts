// Several processes on one machine-ID field in a real Redis: a holder paused past its TTL, and
// Redis restarted without persistence under two running holders. Every ID of every process is
// collected and compared.
import { hasRedis, type RedisServer, startRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  adminClient,
  cleanupAfterEach,
  duplicateCount as duplicates,
  freshPrefix,
  holderAndWaiter,
  MARGIN_MS,
  sleep,
  startIssuer,
  until,
  WAIT_MS,
} from './helpers.js';

/** Long enough that a holder on a busy machine keeps its claim until the test pauses it. */
const TTL_S = 5;

const cleanup = cleanupAfterEach();

describe.skipIf(!hasRedis())('processes sharing a one-ID field in a real Redis', () => {
  let redis: RedisServer;
  /** A fresh Redis, and two issuers of its one ID: A issuing, B waiting. */
  async function twoIssuers(name: string) {
    redis = await startRedis({ allowExternal: false });
    cleanup.push(() => redis.close());
    const prefix = freshPrefix(name);
    const issuers = await holderAndWaiter(() => startIssuer(redis.url, prefix, TTL_S), cleanup);
    return { ...issuers, key: `{${prefix}}:0` };
  }

  it('a holder SIGSTOPped past the TTL issues nothing after it resumes, while another process claims the ID and issues: 0 duplicates', async () => {
    const { a, b } = await twoIssuers('sigstop');

    a.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    await until(() => b.ids.length > 50, WAIT_MS, 'B issuing after A stopped');
    a.child.kill('SIGCONT');
    const resumedAt = Date.now();
    await sleep(1500); // A runs again for a while: fenced, it issues nothing
    await Promise.all([a.stop(), b.stop()]);

    const aAfter = a.ids.filter((x) => x.at >= resumedAt);
    expect(aAfter).toEqual([]);
    expect(duplicates(a, b)).toBe(0);
    const lastA = a.ids.at(-1)!;
    const firstB = b.ids[0]!;
    expect(lastA.id).toBeLessThan(firstB.id);
    // A's key outlived A's trust in it by the margin at least (A fences at its last confirmed
    // keepalive + TTL - margin, Redis expires the key no sooner than that keepalive + TTL). Not
    // measured from the stop: a busy A may have sent its last keepalive well before it.
    expect(b.claimedAt!).toBeGreaterThanOrEqual(lastA.at + MARGIN_MS);
    console.log(
      `SIGSTOP: A issued ${a.ids.length} IDs (the last ${stoppedAt - lastA.at} ms before the stop), B claimed ${b.claimedAt! - stoppedAt} ms after the stop and issued ${b.ids.length}; A issued ${aAfter.length} after resuming; duplicates ${duplicates(a, b)}`,
    );
  });

  it('Redis restarted without persistence under two running processes: their issuing windows for the one ID never overlap', async () => {
    const { a, b, key } = await twoIssuers('forget');

    // Forget everything at once, while A is paused for a moment (a GC pause, a slow disk): B,
    // retrying every 50 ms, claims the ID in the empty Redis while A still trusts its claim
    // (its deadline has not passed). Without the rule, B would issue at once beside A.
    a.child.kill('SIGSTOP');
    const restartedAt = Date.now();
    await redis.kill();
    await redis.start();
    // A resumes once B's claim is in: resumed earlier, A may reconnect and take the ID back
    // first (a busy machine can delay B's next attempt by seconds), and B would never issue.
    const admin = adminClient(redis.url);
    cleanup.push(async () => void admin.disconnect());
    await until(async () => (await admin.exists(key)) === 1, WAIT_MS, "B's claim in the restarted Redis");
    const bClaimedAt = Date.now();
    a.child.kill('SIGCONT');
    await until(() => b.ids.length > 50, WAIT_MS, 'B issuing after the restart');
    await sleep(500); // A runs on for a while: fenced, it issues nothing
    await Promise.all([a.stop(), b.stop()]);

    const lastA = Math.max(...a.ids.map((x) => x.at));
    const firstB = Math.min(...b.ids.map((x) => x.at));
    const overlapMs = Math.max(0, lastA - firstB);
    expect(overlapMs).toBe(0);
    expect(duplicates(a, b)).toBe(0);
    console.log(
      `forgetting Redis: A's last ID ${lastA - restartedAt} ms after the restart, B's key seen ${bClaimedAt - restartedAt} ms after it, B issued from ${firstB - restartedAt} ms (TTL ${TTL_S * 1000} ms); overlap ${overlapMs} ms, duplicates ${duplicates(a, b)}`,
    );
  });
});
