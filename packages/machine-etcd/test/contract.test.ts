// The lease contract (machine-lease/test/cases.ts) on one real etcd server.
import { describe } from 'vitest';
import { foreignIdentity, idsAmong, leaseContractOnServer } from '../../machine-lease/test/cases.js';
import * as etcd from '../src/index.js';
import { etcdForSuite, freshPrefix } from './helpers.js';

describe('the lease contract on etcd', () => {
  const suite = etcdForSuite();
  leaseContractOnServer('etcd', etcd, 200, async (name) => {
    const prefix = freshPrefix(name);
    const endpoints = suite.server.endpoints;
    return {
      provider: (extra) =>
        etcd.etcdMachineId({ endpoints, prefix, ttlSeconds: 2, fenceMarginMs: 500, ...extra }),
      claimed: async () =>
        idsAmong(
          (await suite.admin.getAll().prefix(`${prefix}/`).keys()).map((k) => k.slice(prefix.length + 1)),
        ),
      async plant(ids) {
        // Keys with no lease: a holder etcd never lets go of.
        await Promise.all(ids.map((id) => suite.admin.put(`${prefix}/${id}`).value(foreignIdentity())));
      },
      async drop(id) {
        await suite.admin.delete().key(`${prefix}/${id}`);
      },
      async recorded(id) {
        const raw = await suite.admin.get(`${prefix}/time/${id}`).string();
        return raw === null ? undefined : Number(raw);
      },
    };
  });
});
