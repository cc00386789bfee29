// `ids-server --machines 64` on each leased source, against real servers on loopback ports: the
// 64 claims share one lease (etcd), one keepalive script per period (Redis) and one session
// (ZooKeeper), as issue 36 asks; each server's own count is read, not the process's.
import { etcdMachineId } from '@ids/machine-etcd';
import { redisMachineId } from '@ids/machine-redis';
import { zookeeperMachineId } from '@ids/machine-zookeeper';
import { fourLetters, hasEtcd, hasRedis, hasZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { etcdForSuite } from '../../machine-etcd/test/helpers.js';
import { redisForSuite } from '../../machine-redis/test/helpers.js';
import { zookeeperForSuite } from '../../machine-zookeeper/test/helpers.js';
import { type BinRun, call, scratch, startBin } from './helpers.js';

const MACHINES = 64;

/** Starts the bin with 64 generators on `source`, and checks they hold 64 distinct IDs. */
async function start64(source: string, args: string[]): Promise<{ run: BinRun; machines: number[] }> {
  const run = await startBin({ IDS_CLAIM_DIR: scratch(), IDS_MACHINE_ID_TTL_SECONDS: '3' }, [
    '--machine-id-source',
    source,
    '--machines',
    String(MACHINES),
    ...args,
  ]);
  const ready = await call(run.url, 'GET', '/health/ready');
  expect(ready.status, ready.text).toBe(200);
  const machines = ready.json.machines.map((m: { machineId: number }) => m.machineId) as number[];
  expect(new Set(machines).size).toBe(MACHINES);
  const ids = (await call(run.url, 'GET', '/ids?count=1000')).json.ids as string[];
  expect(new Set(ids).size).toBe(1000);
  return { run, machines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Three claims of one provider with `shareLease`: releasing one deletes its key alone, the lease
 * (`leases()`: how many the store has) carrying the other two; releasing them ends it.
 */
async function releaseOneOfThree(
  provider: (context: {
    bits: number;
  }) => Promise<{ machineId: number; leaseId: string; release(): Promise<void> }>,
  claimed: () => Promise<number[]>,
  leases: () => Promise<number>,
): Promise<void> {
  const claims = await Promise.all([0, 1, 2].map(() => provider({ bits: 16 })));
  const ids = claims.map((c) => c.machineId);
  expect(new Set(ids).size).toBe(3);
  expect(new Set(claims.map((c) => c.leaseId)).size).toBe(1);
  expect(await leases()).toBe(1);
  await claims[0]!.release();
  expect(await claimed()).toEqual(ids.slice(1).sort((a, b) => a - b));
  expect(await leases()).toBe(1);
  await Promise.all(claims.slice(1).map((c) => c.release()));
  expect(await claimed()).toEqual([]);
  expect(await leases()).toBe(0);
}

/** An etcd v3 JSON-gateway call. */
async function etcdApi(url: string, path: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown>;
}

describe.skipIf(!hasEtcd())('ids-server --machines 64 on etcd', () => {
  const etcd = etcdForSuite();

  it('holds its 64 keys under one etcd lease, and SIGTERM revokes it', async () => {
    const url = etcd.server.endpoints[0] as string;
    const leases = async () =>
      ((await etcdApi(url, '/v3/lease/leases', {})).leases as unknown[] | undefined) ?? [];
    const { run } = await start64('etcd', ['--etcd', etcd.server.endpoints.join(',')]);
    try {
      expect(await leases()).toHaveLength(1);
      const b64 = (text: string) => Buffer.from(text).toString('base64');
      const range = await etcdApi(url, '/v3/kv/range', {
        key: b64('/ids/machine-id/'),
        range_end: b64('/ids/machine-id0'),
      });
      const claims = ((range.kvs ?? []) as { key: string; lease?: string }[]).filter(
        (kv) => !Buffer.from(kv.key, 'base64').toString().startsWith('/ids/machine-id/time/'),
      );
      expect(claims).toHaveLength(MACHINES);
      expect(new Set(claims.map((kv) => kv.lease)).size).toBe(1);
    } finally {
      expect(await run.stop()).toBe(0);
    }
    expect(await leases()).toEqual([]);
  });

  it('a claim of a shared lease released alone deletes its key; the last revokes the lease', async () => {
    const url = etcd.server.endpoints[0] as string;
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    await releaseOneOfThree(
      etcdMachineId({ endpoints: etcd.server.endpoints, prefix: '/ids-release', shareLease: true }),
      async () => {
        const range = await etcdApi(url, '/v3/kv/range', {
          key: b64('/ids-release/'),
          range_end: b64('/ids-release/time'),
          keys_only: true,
        });
        return ((range.kvs ?? []) as { key: string }[])
          .map((kv) => Number(Buffer.from(kv.key, 'base64').toString().slice('/ids-release/'.length)))
          .sort((a, b) => a - b);
      },
      async () =>
        (((await etcdApi(url, '/v3/lease/leases', {})).leases as unknown[] | undefined) ?? []).length,
    );
  });
});

describe.skipIf(!hasRedis())('ids-server --machines 64 on Redis', () => {
  const redis = redisForSuite();

  it('keeps its 64 keys alive with one script call per keepalive, not one per key', async () => {
    const { admin } = redis;
    // A time recorded for every ID, as in a Redis that never forgot: no claim is held back a TTL
    // before use (the pool claims one after the other, 64 TTLs otherwise).
    const past = String(Date.now() - 60_000);
    for (let from = 0; from < 2 ** 16; from += 4096) {
      const pairs = Array.from({ length: 4096 }, (_, i) => [
        `{ids:machine-id}:time:${from + i}`,
        past,
      ]).flat();
      await admin.mset(...pairs);
    }
    const { run } = await start64('redis', ['--machine-id-redis', redis.server.url]);
    try {
      // Counted with MONITOR: every script the server sends, by what it does.
      const monitor = await admin.monitor();
      const scripts = new Map<string, number>();
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args[0]?.toLowerCase() !== 'eval') return;
        const kind = /'PEXPIRE'/.test(args[1] ?? '') ? 'keepalive' : 'other';
        scripts.set(kind, (scripts.get(kind) ?? 0) + 1);
      });
      await sleep(4000);
      monitor.disconnect();
      // TTL 3 s, margin 600 ms: a keepalive every 800 ms, 5 in 4 s (a loaded machine may skip some).
      const keepalives = scripts.get('keepalive') ?? 0;
      console.log(
        `Redis, 64 claims, 4 s: ${keepalives} keepalive scripts, ${scripts.get('other') ?? 0} other scripts`,
      );
      expect(keepalives).toBeGreaterThanOrEqual(2);
      expect(keepalives).toBeLessThanOrEqual(7);
      const keys = (await admin.keys('{ids:machine-id}:*')).filter((key) =>
        /^\{ids:machine-id\}:\d+$/.test(key),
      );
      expect(keys).toHaveLength(MACHINES);
    } finally {
      expect(await run.stop()).toBe(0);
    }
  });

  it('a claim of a shared token released alone deletes its key; the last deletes them all', async () => {
    const claimed = async () =>
      (await redis.admin.keys('{ids-release}:*'))
        .filter((key) => /^\{ids-release\}:\d+$/.test(key))
        .map((key) => Number(key.split(':')[1]))
        .sort((a, b) => a - b);
    // A token lives in the holder: Redis counts it as alive while a key carries it.
    await releaseOneOfThree(
      redisMachineId({ url: redis.server.url, prefix: 'ids-release', ttlSeconds: 1, shareLease: true }),
      claimed,
      async () => ((await claimed()).length > 0 ? 1 : 0),
    );
  });
});

/** ZooKeeper's open client connections (sessions), by its `srvr` four-letter word. */
async function zkConnections(port: number): Promise<number> {
  const reply = await fourLetters(port, 'srvr');
  const match = /Connections: (\d+)/.exec(reply);
  if (!match) throw new Error(`srvr answered ${JSON.stringify(reply)}`);
  return Number(match[1]);
}

describe.skipIf(!hasZookeeper())('ids-server --machines 64 on ZooKeeper', () => {
  const zk = zookeeperForSuite();

  it('holds its 64 nodes with one session', async () => {
    const before = await zkConnections(zk.server.port);
    const { run, machines } = await start64('zookeeper', ['--zookeeper', zk.server.connect]);
    try {
      expect((await zkConnections(zk.server.port)) - before).toBe(1);
      const children = ((await zk.admin.getChildren('/ids/machine-id/claims')) ?? []).map(Number);
      expect(children.sort((a, b) => a - b)).toEqual([...machines].sort((a, b) => a - b));
      const owners = new Set<string | undefined>();
      for (const id of children) owners.add((await zk.admin.exists(`/ids/machine-id/claims/${id}`))?.owner);
      expect(owners.size).toBe(1);
    } finally {
      expect(await run.stop()).toBe(0);
    }
    expect((await zk.admin.getChildren('/ids/machine-id/claims')) ?? []).toEqual([]);
  });

  it('a claim of a shared session released alone deletes its node; the last closes the session', async () => {
    const before = await zkConnections(zk.server.port);
    await releaseOneOfThree(
      zookeeperMachineId({ connect: zk.server.connect, path: '/ids-release', shareLease: true }),
      async () =>
        ((await zk.admin.getChildren('/ids-release/claims')) ?? []).map(Number).sort((a, b) => a - b),
      async () => (await zkConnections(zk.server.port)) - before,
    );
  });
});
