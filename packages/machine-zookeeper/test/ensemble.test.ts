// A three-member ZooKeeper ensemble whose peer links run through TCP proxies: the leader is cut
// off from the other two while a process that reaches only the leader holds the one ID of the
// field, and a process that reaches only the others waits for it.
import { hasZookeeper, serverForSuite, startZookeeperEnsemble } from '@ids/test-services';
import { describe, it } from 'vitest';
import { cleanupAfterEach, freshPath, handOver, startIssuer, WAIT_MS } from './helpers.js';

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
      await handOver(() => startIssuer(connects.shift()!, path), {
        label: `leader ${leader.myid} cut off`,
        // Every peer connection to or from the leader is reset and new ones refused (a blackhole
        // instead cost 13 s more here: ZooKeeper's election waits on connects to the silent
        // peer; the fencing is the same either way). A stays cut off while it runs on.
        cut() {
          ensemble.server.cut(leader, 'reset');
          cleanup.push(async () => ensemble.server.heal());
          return undefined;
        },
        waitMs: 2 * WAIT_MS,
        runOnMs: 1000,
      });
    });
  },
);
