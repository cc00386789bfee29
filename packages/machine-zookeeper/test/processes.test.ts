// Several processes on one machine-ID field in a real ZooKeeper: 40 claiming at once, and a
// holder paused past its session timeout. Every ID of every process is collected and compared.
import { decomposeIn } from '@ids/engine';
import { hasZookeeper, serverForSuite, startZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  cleanupAfterEach,
  duplicateCount as duplicates,
  freshPath,
  holderAndWaiter,
  layoutWith,
  MARGIN_MS,
  sleep,
  startIssuer,
  until,
  WAIT_MS,
} from './helpers.js';

/** Long enough that a holder on a busy machine keeps its session until the test pauses it. */
const TTL_S = 5;

const cleanup = cleanupAfterEach();

describe.skipIf(!hasZookeeper())('processes sharing a machine-ID field in a real ZooKeeper', () => {
  const zk = serverForSuite(startZookeeper);

  it('40 processes claim at once into a field of 64: 40 distinct IDs', async () => {
    const path = freshPath('forty-processes');
    const issuers = Array.from({ length: 40 }, () => startIssuer(zk.server.connect, path, TTL_S, 6));
    for (const issuer of issuers) cleanup.push(() => issuer.stop());
    await until(
      () => issuers.every((i) => i.claimedAt !== undefined),
      4 * WAIT_MS,
      'all 40 processes claimed',
    );
    await until(() => issuers.every((i) => i.ids.length > 0), WAIT_MS, 'all 40 issuing');
    // The machine ID each process issues under, read back from its IDs.
    const layout = layoutWith(6);
    const machines = issuers.map((i) => Number(decomposeIn(layout, i.ids[0]!.id).machine));
    expect(new Set(machines).size).toBe(40);
    expect(machines.every((m) => m >= 0 && m < 64)).toBe(true);
    await Promise.all(issuers.map((i) => i.stop()));
    expect(duplicates(...issuers)).toBe(0);
  });

  it('a holder SIGSTOPped past its session timeout issues nothing after the next holder takes the ID: 0 duplicates', async () => {
    const path = freshPath('sigstop');
    const { a, b } = await holderAndWaiter(() => startIssuer(zk.server.connect, path, TTL_S), cleanup);

    a.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    await until(() => b.ids.length > 50, WAIT_MS, 'B issuing after A stopped');
    a.child.kill('SIGCONT');
    const resumedAt = Date.now();
    await sleep(1500); // A runs again for a while: fenced, it issues nothing
    await Promise.all([a.stop(), b.stop()]);

    const firstB = b.ids[0]!;
    const aAfterB = a.ids.filter((x) => x.at >= firstB.at);
    expect(aAfterB).toEqual([]);
    expect(a.ids.filter((x) => x.at >= resumedAt)).toEqual([]);
    expect(duplicates(a, b)).toBe(0);
    const lastA = a.ids.at(-1)!;
    expect(lastA.id).toBeLessThan(firstB.id);
    // A's session outlived A's trust in it by the margin at least.
    expect(b.claimedAt!).toBeGreaterThanOrEqual(lastA.at + MARGIN_MS);
    console.log(
      `SIGSTOP: A issued ${a.ids.length} IDs (the last ${stoppedAt - lastA.at} ms before the stop), B claimed ${b.claimedAt! - stoppedAt} ms after the stop and issued ${b.ids.length}; A issued ${aAfterB.length} after B's first; duplicates ${duplicates(a, b)}`,
    );
  });
});
