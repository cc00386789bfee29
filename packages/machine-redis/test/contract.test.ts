// The lease contract (machine-lease/test/cases.ts) on one real redis-server.
import { hasRedis } from '@ids/test-services';
import { describe } from 'vitest';
import { foreignIdentity, idsAmong, leaseContractOnServer } from '../../machine-lease/test/cases.js';
import { FAST_LEASE } from '../../machine-lease/test/kit.js';
import * as redis from '../src/index.js';
import { freshPrefix, redisForSuite } from './helpers.js';

describe.skipIf(!hasRedis())('the lease contract on Redis', () => {
  const suite = redisForSuite();
  leaseContractOnServer('redis', redis, 200, async (name, bits) => {
    const prefix = freshPrefix(name);
    const key = (id: number | string) => `{${prefix}}:${id}`;
    // A recorded past for every ID, so that no first claim waits out the unknown past (one
    // TTL; quarantine.test.ts is about that wait).
    const past = String(Date.now() - 60_000);
    await suite.admin.mset(...Array.from({ length: 2 ** bits }, (_, id) => [key(`time:${id}`), past]).flat());
    return {
      provider: (extra) => redis.redisMachineId({ url: suite.server.url, prefix, ...FAST_LEASE, ...extra }),
      claimed: async () => idsAmong((await suite.admin.keys(key('*'))).map((k) => k.slice(key('').length))),
      async plant(ids) {
        const until = Date.now() + 600_000;
        for (const id of ids) {
          await suite.admin.set(key(id), foreignIdentity({ token: 'ab'.repeat(16) }), 'PX', 600_000);
          await suite.admin.zadd(key('claims'), until, String(id));
        }
      },
      async drop(id) {
        await suite.admin.del(key(id));
      },
      async recorded(id) {
        const raw = await suite.admin.get(key(`time:${id}`));
        return raw === null ? undefined : Number(raw);
      },
    };
  });
});
