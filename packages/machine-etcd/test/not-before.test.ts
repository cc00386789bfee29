// Issue 22 item 9 on a real etcd: a time recorded ahead of this host's clock (see
// machine-lease/test/not-before.ts for the cases).
import { describe } from 'vitest';
import { notBeforeCases } from '../../machine-lease/test/not-before.js';
import { etcdMachineId, LeaseTimeAheadError, RecordedTimeWait } from '../src/index.js';
import { canStartEtcd, etcdForSuite, freshPrefix } from './helpers.js';

describe.skipIf(!canStartEtcd)('a recorded time ahead of the clock (etcd)', () => {
  const suite = etcdForSuite();
  notBeforeCases({
    prefix: freshPrefix,
    // Called synchronously so that option errors throw where the provider is made.
    claim: (options) => {
      const provider = etcdMachineId({ endpoints: suite.server.endpoints, ...options } as never);
      return provider({ bits: 0 });
    },
    setTime: async (prefix, ms) => {
      await suite.admin.put(`${prefix}/time/0`).value(String(ms));
    },
    claimed: async (prefix) => (await suite.admin.get(`${prefix}/0`).string()) !== null,
    notice: RecordedTimeWait,
    timeAhead: LeaseTimeAheadError,
    name: 'etcd',
  });
});
