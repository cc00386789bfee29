// A time recorded ahead of this host's clock, on a real ZooKeeper (see
// machine-lease/test/not-before.ts for the cases).
import { hasZookeeper, startZookeeper, type ZookeeperStandalone } from '@ids/test-services';
import { afterAll, beforeAll, describe } from 'vitest';
import { notBeforeCases } from '../../machine-lease/test/not-before.js';
import {
  LeaseTimeAheadError,
  RecordedTimeWait,
  type ZkSession,
  ZookeeperOptionError,
  zookeeperMachineId,
} from '../src/index.js';
import { adminSession, freshPath } from './helpers.js';

describe.skipIf(!hasZookeeper())('a recorded time ahead of the clock (ZooKeeper)', () => {
  let zk: ZookeeperStandalone;
  let admin: ZkSession;
  beforeAll(async () => {
    // The cases ask for a 600 s session, above ZooKeeper's usual ceiling.
    zk = await startZookeeper({ maxSessionTimeoutMs: 600_000 });
    admin = await adminSession(zk.connect);
  });
  afterAll(async () => {
    await admin?.close();
    await zk?.close();
  });
  notBeforeCases({
    prefix: freshPath,
    // Called synchronously so that option errors throw where the provider is made.
    claim: ({ prefix, ...options }) => {
      const provider = zookeeperMachineId({
        connect: zk.connect,
        path: prefix as string,
        ...options,
      } as never);
      return provider({ bits: 0 });
    },
    setTime: async (path, ms) => {
      await admin.mkdirp(`${path}/times`);
      const at = `${path}/times/0`;
      if (await admin.exists(at)) await admin.setData(at, String(ms), -1);
      else await admin.create(at, String(ms));
    },
    claimed: async (path) => (await admin.exists(`${path}/claims/0`)) !== undefined,
    optionError: ZookeeperOptionError,
    notice: RecordedTimeWait,
    timeAhead: LeaseTimeAheadError,
    name: 'zookeeper',
  });
});
