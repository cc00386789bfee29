// A three-member ZooKeeper ensemble whose peer links run through TCP proxies: the leader is cut
// off from the other two while a process that reaches only the leader holds the one ID of the
// field, and a process that reaches only the others waits for it.
import { hasZookeeper, serverForSuite, startZookeeperEnsemble } from '@ids/test-services';
import { describe, it } from 'vitest';
import { adminSession, cleanupAfterEach, freshPath, handOver, startIssuer, WAIT_MS } from './helpers.js';

const cleanup = cleanupAfterEach();

describe.skipIf(!hasZookeeper() || Boolean(process.env.ZOOKEEPER_CONNECT))(
  'a partitioned ZooKeeper ensemble',
  () => {
    const ensemble = serverForSuite(() => startZookeeperEnsemble({ partitionable: true }));

    /** One run: cut the current leader off under A, and hand the ID over to B on the other side. */
    async function cutTheLeader(): Promise<void> {
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
        // Why B could not issue: the members' roles, and who holds the claim on B's side.
        async describe() {
          const modes = await Promise.all(
            ensemble.server.members.map(async (m) => `${m.myid}: ${(await m.mode()) ?? 'not serving'}`),
          );
          const claims = await claimOwners(others.map((m) => m.connect).join(','), path).catch(
            (error: Error) => `not read (${error.message})`,
          );
          return `modes ${modes.join(', ')}; claims ${claims}`;
        },
      });
    }

    it(
      'the leader cut off under its only client: that holder fences, the other side takes the ID after the session expires, 0 duplicates',
      async () => {
        try {
          await cutTheLeader();
        } catch (error) {
          // Once in many runs here the two members left never elected a leader (no member serving
          // 100 s after the cut), so B could not even open a session: ZooKeeper's election, not
          // the claim under test. That one failure, and only it, is run again on a healed
          // ensemble; anything else (a duplicate, a holder not fenced, B refused while a quorum
          // served) fails at once.
          const message = (error as Error).message;
          const noQuorum =
            /B claimed at never/.test(message) &&
            /modes 1: not serving, 2: not serving, 3: not serving/.test(message);
          if (!noQuorum) throw error;
          console.log(`no leader elected on the majority side; run again on a healed ensemble: ${message}`);
          ensemble.server.heal();
          await ensemble.server.serving();
          await cutTheLeader();
        }
      },
      3 * 2 * WAIT_MS,
    );
  },
);

/** Each claim under `path` and the session that owns it, read through `connect`. */
async function claimOwners(connect: string, path: string): Promise<string> {
  const admin = await adminSession(connect);
  try {
    const claims = (await admin.getChildren(`${path}/claims`)) ?? [];
    const owners = await Promise.all(
      claims.map(async (c) => `${c} owned by ${(await admin.exists(`${path}/claims/${c}`))?.owner}`),
    );
    return owners.join(', ') || 'none';
  } finally {
    await admin.close();
  }
}
