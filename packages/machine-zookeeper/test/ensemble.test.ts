// A three-member ZooKeeper ensemble whose peer links run through TCP proxies: the leader is cut
// off from the other two while a process that reaches only the leader holds the one ID of the
// field, and a process that reaches only the others waits for it.
import { hasZookeeper, serverForSuite, startZookeeperEnsemble } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  cleanupAfterEach,
  duplicateCount as duplicates,
  freshPath,
  holderAndWaiter,
  MARGIN_MS,
  sleep,
  startIssuer,
  until,
  WAIT_MS,
} from './helpers.js';

const TTL_S = 5;
const cleanup = cleanupAfterEach();

describe.skipIf(!hasZookeeper() || Boolean(process.env.ZOOKEEPER_CONNECT))(
  'a partitioned ZooKeeper ensemble',
  () => {
    const ensemble = serverForSuite(() => startZookeeperEnsemble({ partitionable: true }));

    it('the leader cut off under its only client: that holder fences, the other side takes the ID after the session expires, 0 duplicates', async () => {
      const leader = await ensemble.server.leader();
      const others = ensemble.server.members.filter((m) => m !== leader);
      const path = freshPath('partition');
      // A, started first, dials the leader alone; B dials the two others.
      const connects = [leader.connect, others.map((m) => m.connect).join(',')];
      const { a, b } = await holderAndWaiter(() => startIssuer(connects.shift()!, path, TTL_S), cleanup);

      // Cut: every peer connection to or from the leader is reset and new ones refused (a
      // blackhole instead cost 13 s more here: ZooKeeper's election waits on connects to the
      // silent peer; the fencing is the same either way).
      const cutAt = Date.now();
      ensemble.server.cut(leader, 'reset');
      cleanup.push(async () => ensemble.server.heal());
      await until(() => b.ids.length > 50, 2 * WAIT_MS, 'B issuing after the leader was cut off');
      await sleep(1000); // A runs on, cut off: fenced, it issues nothing
      await Promise.all([a.stop(), b.stop()]);

      const firstB = b.ids[0]!;
      const lastA = a.ids.at(-1)!;
      expect(a.ids.filter((x) => x.at >= firstB.at)).toEqual([]);
      expect(duplicates(a, b)).toBe(0);
      expect(lastA.id).toBeLessThan(firstB.id);
      expect(b.claimedAt!).toBeGreaterThanOrEqual(lastA.at + MARGIN_MS);
      console.log(
        `leader ${leader.myid} cut off: A issued ${a.ids.length} IDs, the last ${lastA.at - cutAt} ms after the cut; B claimed ${b.claimedAt! - cutAt} ms after it and issued ${b.ids.length}; duplicates ${duplicates(a, b)}`,
      );
    });
  },
);
