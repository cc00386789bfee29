// A time recorded ahead of this host's clock, on a real ZooKeeper (see
// machine-lease/test/not-before.ts for the cases).
import { hasZookeeper } from '@ids/test-services';
import { describe } from 'vitest';
import { notBeforeCases } from '../../machine-lease/test/not-before.js';
import { LeaseTimeAheadError, RecordedTimeWait, zookeeperMachineId } from '../src/index.js';
import { freshPath, zookeeperForSuite } from './helpers.js';

describe.skipIf(!hasZookeeper())('a recorded time ahead of the clock (ZooKeeper)', () => {
  // The cases ask for a 600 s session, above ZooKeeper's usual ceiling.
  const suite = zookeeperForSuite({ maxSessionTimeoutMs: 600_000 });
  notBeforeCases({
    prefix: freshPath,
    // Called synchronously so that option errors throw where the provider is made.
    claim: ({ prefix, ...options }) => {
      const provider = zookeeperMachineId({
        connect: suite.server.connect,
        path: prefix as string,
        ...options,
      } as never);
      return provider({ bits: 0 });
    },
    setTime: async (path, ms) => {
      await suite.admin.mkdirp(`${path}/times`);
      const at = `${path}/times/0`;
      if (await suite.admin.exists(at)) await suite.admin.setData(at, String(ms), -1);
      else await suite.admin.create(at, String(ms));
    },
    claimed: async (path) => (await suite.admin.exists(`${path}/claims/0`)) !== undefined,
    notice: RecordedTimeWait,
    timeAhead: LeaseTimeAheadError,
    name: 'zookeeper',
  });
});
