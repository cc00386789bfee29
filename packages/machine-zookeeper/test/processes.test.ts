// Several processes on one machine-ID field in a real ZooKeeper: 40 claiming at once, and a
// holder paused past its session timeout. Every ID of every process is collected and compared.
import { decomposeIn } from '@ids/engine';
import { hasZookeeper, serverForSuite, startZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { duplicateCount, freshPath, handOver, layoutWith, startIssuer, until, WAIT_MS } from './helpers.js';

describe.skipIf(!hasZookeeper())('processes sharing a machine-ID field in a real ZooKeeper', () => {
  const zk = serverForSuite(startZookeeper);

  it('40 processes claim at once into a field of 64: 40 distinct IDs', async () => {
    const path = freshPath('forty-processes');
    const issuers = Array.from({ length: 40 }, () => startIssuer(zk.server.connect, path, 6));
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
    expect(duplicateCount(...issuers)).toBe(0);
  });

  it('a holder SIGSTOPped past its session timeout issues nothing after the next holder takes the ID: 0 duplicates', async () => {
    const path = freshPath('sigstop');
    await handOver(() => startIssuer(zk.server.connect, path));
  });
});
