// The lease contract (machine-lease/test/cases.ts) on one real ZooKeeper server.
import { hasZookeeper } from '@ids/test-services';
import { describe } from 'vitest';
import { foreignIdentity, idsAmong, leaseContractOnServer } from '../../machine-lease/test/cases.js';
import * as zookeeper from '../src/index.js';
import { FAST_LEASE, freshPath, zookeeperForSuite } from './helpers.js';

describe.skipIf(!hasZookeeper())('the lease contract on ZooKeeper', () => {
  const suite = zookeeperForSuite();
  // Each claim is a session of its own: 40 at once is what the single server here takes well.
  leaseContractOnServer('zookeeper', zookeeper, 40, async (name) => {
    const path = freshPath(name);
    const { connect } = suite.server;
    return {
      provider: (extra) => zookeeper.zookeeperMachineId({ connect, path, ...FAST_LEASE, ...extra }),
      claimed: async () => idsAmong((await suite.admin.getChildren(`${path}/claims`)) ?? []),
      async plant(ids) {
        // Ephemeral nodes of the operator's session, which outlives the test.
        await suite.admin.mkdirp(`${path}/claims`);
        for (const id of ids)
          await suite.admin.create(`${path}/claims/${id}`, foreignIdentity(), 'ephemeral');
      },
      async drop(id) {
        await suite.admin.remove(`${path}/claims/${id}`, -1);
      },
      async recorded(id) {
        const node = await suite.admin.getData(`${path}/times/${id}`);
        return node === undefined ? undefined : Number(node.data);
      },
    };
  });
});
