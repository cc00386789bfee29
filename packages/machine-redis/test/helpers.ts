import { type Layout, resolveMachineId } from '@ids/engine';
import { type RedisServer, serverForSuite, startRedis } from '@ids/test-services';
import { Redis } from 'ioredis';

import { HOLDER_TTL_S, type Issuer, spawnIssuer, uniqueName } from '../../machine-lease/test/kit.js';
import { type LeasedClaim, type RedisMachineIdOptions, redisMachineId } from '../src/index.js';

// Everything the suites share with the other lease stores' tests.
export * from '../../machine-lease/test/kit.js';

/** A prefix no other test (or run, against a shared Redis) uses. */
export function freshPrefix(name: string): string {
  return `ids-test:${uniqueName(name)}`;
}

/** Runs the provider the way Sonyflake.create does (range check included) and returns the claim. */
export async function claim(layout: Layout, options: RedisMachineIdOptions): Promise<LeasedClaim> {
  return (await resolveMachineId(layout, redisMachineId(options))) as LeasedClaim;
}

/** A plain client for looking at and meddling with keys, as an operator with redis-cli would. */
export function adminClient(url: string): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** startRedis() for the tests of the enclosing describe, with an admin client on it. */
export function redisForSuite(): { readonly server: RedisServer; readonly admin: Redis } {
  return serverForSuite(() => startRedis(), {
    connect: (redis) => adminClient(redis.url),
    stop: async (redis, admin) => {
      admin?.disconnect();
      await redis.close();
    },
  });
}

/** Starts an issuer (test/fixtures/issuer.mjs) of a `bits`-bit field on `url` under `prefix`, TTL HOLDER_TTL_S. */
export function startIssuer(url: string, prefix: string, bits = 0): Issuer {
  return spawnIssuer(__dirname, [url, prefix, HOLDER_TTL_S, bits]);
}
