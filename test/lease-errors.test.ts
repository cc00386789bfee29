// One fault per lease-error concept on a real etcd and a real Redis: each is caught with the one
// class of @ids/machine-lease, whatever the store, and says which store in `store` and at the
// start of its message. The store packages re-export the very same classes.
import { spawnSync } from 'node:child_process';
import type { MachineIdClaim } from '@ids/engine';
import * as etcdPackage from '@ids/machine-etcd';
import { etcdMachineId } from '@ids/machine-etcd';
import {
  LeaseBitsMismatchError,
  LeaseCorruptClaimError,
  LeaseError,
  LeaseLostError,
  LeaseSpaceFullError,
  LeaseStoreRefusedError,
  LeaseTimeAheadError,
  StoreUnavailableError,
} from '@ids/machine-lease/errors';
import * as redisPackage from '@ids/machine-redis';
import { redisMachineId } from '@ids/machine-redis';
import {
  type EtcdCluster,
  freePort,
  hasRedis,
  type RedisServer,
  serverForSuite,
  startEtcd,
  startRedis,
} from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

const FAMILY = {
  LeaseBitsMismatchError,
  LeaseCorruptClaimError,
  LeaseError,
  LeaseLostError,
  LeaseSpaceFullError,
  LeaseStoreRefusedError,
  LeaseTimeAheadError,
  StoreUnavailableError,
};

type Provider = (context: {
  bits: number;
}) => Promise<MachineIdClaim & { key: string; release(): Promise<void> }>;

/** What one store gives the cases: its providers and an operator's hands on its keys. */
interface StoreUnderTest {
  readonly name: 'etcd' | 'redis';
  /** A provider on the running server, under `prefix`, with `options`. */
  provider(prefix: string, options?: Record<string, unknown>): Provider;
  /** A provider on a loopback port nothing listens on. */
  unreachable(port: number): Provider;
  /** A provider whose credentials the running server refuses. */
  refused(): Provider;
  /** Writes `value` under the claim key of `id`, as something other than a holder would. */
  putClaim(prefix: string, id: number, value: string): Promise<void>;
  /** Lists `id` as claimed, as a holder of a wider field would have. */
  putWideClaim(prefix: string, id: number): Promise<void>;
  /** Writes the recorded time of `id`, as an earlier holder would. */
  setTime(prefix: string, id: number, ms: number): Promise<void>;
  /** Deletes a key, as an operator would. */
  deleteKey(key: string): Promise<void>;
}

// A TTL long enough that no claim of these cases is fenced by a slow machine; only the faults
// made on purpose end a lease.
const LEASE = { ttlSeconds: 10, timeoutMs: 3000 };

let serial = 0;
function prefixFor(store: string, name: string): string {
  const unique = `${name}-${process.pid}-${Date.now().toString(36)}-${serial++}`;
  return store === 'etcd' ? `/ids-test/${unique}` : `ids-test:${unique}`;
}

function etcdUnderTest(cluster: () => EtcdCluster, admin: () => Etcd3): StoreUnderTest {
  return {
    name: 'etcd',
    provider: (prefix, options = {}) =>
      etcdMachineId({ endpoints: cluster().endpoints, prefix, ...LEASE, ...options }) as Provider,
    unreachable: (port) =>
      etcdMachineId({ endpoints: `http://127.0.0.1:${port}`, ...LEASE, timeoutMs: 1000 }) as Provider,
    // This etcd has authentication off: asking to authenticate is refused, and waiting will not help.
    refused: () =>
      etcdMachineId({
        endpoints: cluster().endpoints,
        auth: { username: 'nobody', password: 'wrong' },
        ...LEASE,
      }) as Provider,
    putClaim: async (prefix, id, value) => {
      await admin().put(`${prefix}/${id}`).value(value);
    },
    putWideClaim: async (prefix, id) => {
      await admin()
        .put(`${prefix}/${id}`)
        .value('{"host":"elsewhere","pid":1,"started":"2020-01-01T00:00:00.000Z"}');
    },
    setTime: async (prefix, id, ms) => {
      await admin().put(`${prefix}/time/${id}`).value(String(ms));
    },
    deleteKey: async (key) => {
      await admin().delete().key(key);
    },
  };
}

function redisUnderTest(
  server: () => RedisServer,
  guarded: () => RedisServer,
  admin: () => Redis,
): StoreUnderTest {
  return {
    name: 'redis',
    provider: (prefix, options = {}) =>
      redisMachineId({ url: server().url, prefix, ...LEASE, ...options }) as Provider,
    unreachable: (port) =>
      redisMachineId({ url: `redis://127.0.0.1:${port}`, ...LEASE, timeoutMs: 1000 }) as Provider,
    refused: () =>
      redisMachineId({ url: `redis://:wrong@127.0.0.1:${guarded().port}`, ...LEASE }) as Provider,
    putClaim: async (prefix, id, value) => {
      await admin().set(`{${prefix}}:${id}`, value);
    },
    putWideClaim: async (prefix, id) => {
      await admin().zadd(`{${prefix}}:claims`, Date.now() + 600_000, String(id));
    },
    setTime: async (prefix, id, ms) => {
      await admin().set(`{${prefix}}:time:${id}`, String(ms));
    },
    deleteKey: async (key) => {
      await admin().del(key);
    },
  };
}

/** The error `promise` rejects with; fails the test if it resolves (and releases what it got). */
async function failure(promise: Promise<{ release(): Promise<void> }>): Promise<unknown> {
  let held: { release(): Promise<void> } | undefined;
  try {
    held = await promise;
  } catch (error) {
    return error;
  }
  await held.release();
  throw new Error('expected a rejection, but the claim was made');
}

/** Checks what every lease error of `store` has: the family's base, the store's name, a code of the one scheme. */
function expectFromStore(error: unknown, type: abstract new (...args: never[]) => LeaseError, store: string) {
  expect(error).toBeInstanceOf(type);
  expect(error).toBeInstanceOf(LeaseError);
  const e = error as LeaseError;
  expect(e.store).toBe(store);
  expect(e.message.startsWith(`${store}: `), e.message).toBe(true);
  expect(e.code).toMatch(/^ERR_IDS_LEASE_[A-Z_]+$/);
  expect(e.name).toBe(type.name);
}

function cases(get: () => StoreUnderTest): void {
  it('a store package exports the very classes of @ids/machine-lease', () => {
    const exported = (get().name === 'etcd' ? etcdPackage : redisPackage) as Record<string, unknown>;
    for (const [name, type] of Object.entries(FAMILY)) expect(exported[name], name).toBe(type);
  });

  it('every ID held: LeaseSpaceFullError', async () => {
    const store = get();
    const prefix = prefixFor(store.name, 'full');
    // A recorded time in the past: Redis then has no unknown past to wait out before issuing.
    await store.setTime(prefix, 0, Date.now() - 1000);
    const first = await store.provider(prefix)({ bits: 0 });
    try {
      const error = await failure(store.provider(prefix)({ bits: 0 }));
      expectFromStore(error, LeaseSpaceFullError, store.name);
      expect((error as Error).message).toMatch(/every machine ID is held/);
      expect((error as LeaseError).code).toBe('ERR_IDS_LEASE_SPACE_FULL');
    } finally {
      await first.release();
    }
  });

  it('the claim key deleted under a holder: LeaseLostError (key-lost) as the reason of its signal', async () => {
    const store = get();
    const prefix = prefixFor(store.name, 'lost');
    await store.setTime(prefix, 0, Date.now() - 1000);
    const held = await store.provider(prefix)({ bits: 0 });
    try {
      const lost = new Promise<unknown>((resolve) =>
        held.signal?.addEventListener('abort', () => resolve(held.signal?.reason), { once: true }),
      );
      await store.deleteKey(held.key);
      // etcd's watch says so at once; Redis's next keepalive finds the key gone.
      const reason = await lost;
      expectFromStore(reason, LeaseLostError, store.name);
      expect((reason as LeaseLostError).kind).toBe('key-lost');
      expect((reason as LeaseError).code).toBe('ERR_IDS_LEASE_LOST');
    } finally {
      await held.release();
    }
  });

  it('a claim of a wider field under the prefix: LeaseBitsMismatchError', async () => {
    const store = get();
    const prefix = prefixFor(store.name, 'wider');
    await store.putWideClaim(prefix, 5000);
    const error = await failure(store.provider(prefix, { probes: 0 })({ bits: 2 }));
    expectFromStore(error, LeaseBitsMismatchError, store.name);
    expect((error as Error).message).toMatch(/machine ID 5000, which does not fit a 2-bit machine field/);
    expect((error as LeaseError).code).toBe('ERR_IDS_LEASE_BITS_MISMATCH');
  });

  it('garbage in a claim key: LeaseCorruptClaimError naming the key', async () => {
    const store = get();
    const prefix = prefixFor(store.name, 'garbage');
    await store.putClaim(prefix, 0, 'banana');
    const error = await failure(store.provider(prefix)({ bits: 0 }));
    expectFromStore(error, LeaseCorruptClaimError, store.name);
    expect((error as LeaseCorruptClaimError).key).toBe(
      store.name === 'etcd' ? `${prefix}/0` : `{${prefix}}:0`,
    );
    expect((error as Error).message).toMatch(/holds "banana" \(string\)/);
    expect((error as LeaseError).code).toBe('ERR_IDS_LEASE_CORRUPT_CLAIM');
  });

  it('nothing listening: StoreUnavailableError, the one class of every store (not a LeaseError)', async () => {
    const store = get();
    const error = await failure(store.unreachable(await freePort())({ bits: 4 }));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).not.toBeInstanceOf(LeaseError);
    expect(error).toMatchObject({
      store: store.name,
      feature: 'machine-id',
      code: 'ERR_IDS_STORE_UNAVAILABLE',
      name: 'StoreUnavailableError',
    });
    expect((error as Error).message.startsWith(`${store.name}: `), (error as Error).message).toBe(true);
  });

  it('credentials the server refuses: LeaseStoreRefusedError', async () => {
    const store = get();
    const error = await failure(store.refused()({ bits: 4 }));
    expectFromStore(error, LeaseStoreRefusedError, store.name);
    expect((error as LeaseError).code).toBe('ERR_IDS_LEASE_STORE_REFUSED');
  });

  it('a recorded time an hour ahead: LeaseTimeAheadError', async () => {
    const store = get();
    const prefix = prefixFor(store.name, 'ahead');
    await store.setTime(prefix, 0, Date.now() + 3_600_000);
    const error = await failure(store.provider(prefix, { maxNotBeforeWaitMs: 5000 })({ bits: 0 }));
    expectFromStore(error, LeaseTimeAheadError, store.name);
    expect((error as Error).message).toMatch(
      /ahead of this host's clock.*expected at most maxNotBeforeWaitMs = 5000 ms/,
    );
    expect((error as LeaseError).code).toBe('ERR_IDS_LEASE_TIME_AHEAD');
  });
}

const canStartEtcd = spawnSync(process.env.ETCD_BIN ?? 'etcd', ['--version']).status === 0;

describe.skipIf(!canStartEtcd)('lease errors from a real etcd', () => {
  const etcd = serverForSuite(startEtcd, {
    connect: (cluster) => new Etcd3({ hosts: cluster.endpoints }),
    stop: async (cluster, admin) => {
      admin?.close();
      await cluster.stop();
    },
  });
  cases(() =>
    etcdUnderTest(
      () => etcd.server,
      () => etcd.admin,
    ),
  );
});

describe.skipIf(!hasRedis())('lease errors from a real Redis', () => {
  const redis = serverForSuite(() => startRedis({ allowExternal: false }), {
    connect: (server) => new Redis(server.url, { maxRetriesPerRequest: 1 }),
    stop: async (server, admin) => {
      admin?.disconnect();
      await server.close();
    },
  });
  const guarded = serverForSuite(() => startRedis({ allowExternal: false, password: 's3cret' }));
  cases(() =>
    redisUnderTest(
      () => redis.server,
      () => guarded.server,
      () => redis.admin,
    ),
  );
});
