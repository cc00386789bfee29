// Claiming machine IDs from a real Redis on loopback, beside etcd in the same run: the latency
// of one claim, and how long 1,000 claimers take to fill a 10-bit field (1,024 IDs), with a bare
// Redis round trip as the machine's own floor. Starts its own redis-server and etcd (Debian's:
// `node scripts/ensure-services.mjs` installs them) unless IDS_REDIS_URL / ETCD_ENDPOINTS name one.
//
// The recorded time of every ID is seeded first, as in a fleet that has run before: the first
// claim of an ID whose past Redis does not know waits one TTL on purpose (see the machine-redis
// README), which is a rule, not a latency.
import { cpus, loadavg } from 'node:os';
import { etcdMachineId } from '@ids/machine-etcd';
import { redisMachineId } from '@ids/machine-redis';
import { startEtcd, startRedis } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { claimLatencies, fmt, formatTable } from './lib/measure.mjs';

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** @param {number[]} times */
function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
    text: `p50 ${fmt.ms(percentile(sorted, 50))} ms, p99 ${fmt.ms(percentile(sorted, 99))} ms, max ${fmt.ms(percentile(sorted, 100))} ms`,
  };
}

/**
 * `claimers` concurrent claims on a 10-bit field; resolves with seconds and distinct IDs.
 * @param {() => (context: { bits: number }) => Promise<{ machineId: number, release(): Promise<void> }>} make
 * @param {number} claimers
 */
async function fill(make, claimers) {
  const t0 = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: claimers }, () => make()({ bits: 10 })));
  const seconds = (performance.now() - t0) / 1000;
  const held = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
  const distinct = new Set(held.map((c) => c.machineId)).size;
  await Promise.all(held.map((c) => c.release().catch(() => undefined)));
  return { seconds, distinct, failed };
}

export async function benchRedis({ claims = 300, claimers = 1000 } = {}) {
  const load = (loadavg()[0] ?? 0).toFixed(1);
  const externalRedis = process.env.IDS_REDIS_URL;
  const redis = externalRedis
    ? { url: externalRedis, close: async () => {} }
    : await startRedis({ allowExternal: false });
  const externalEtcd = process.env.ETCD_ENDPOINTS;
  const etcd = externalEtcd
    ? { endpoints: externalEtcd.split(','), stop: async () => {} }
    : await startEtcd();
  const admin = new Redis(redis.url);
  const etcdClient = new Etcd3({ hosts: etcd.endpoints });
  const rows = [];
  let run = 0;
  const redisPrefix = async () => {
    const prefix = `ids-bench:${process.pid}-${run++}`;
    const seeded = Date.now() - 60_000;
    const pipeline = admin.pipeline();
    for (let id = 0; id < 1024; id++) pipeline.set(`{${prefix}}:time:${id}`, String(seeded));
    await pipeline.exec();
    return prefix;
  };
  const etcdPrefix = () => `/ids-bench/${process.pid}-${run++}`;
  try {
    const base = { ttlSeconds: 10, timeoutMs: 30_000 };
    const shared = new Redis(redis.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    await shared.connect();
    await shared.ping();
    // Warm up.
    await claimLatencies(redisMachineId({ ...base, client: shared, prefix: await redisPrefix() }), 20);

    const pings = [];
    for (let i = 0; i < claims; i++) {
      const t0 = performance.now();
      await shared.ping();
      pings.push(performance.now() - t0);
    }
    rows.push([`baseline: a bare Redis round trip (PING, ${claims})`, summary(pings).text, '', '']);

    const warm = summary(
      await claimLatencies(redisMachineId({ ...base, client: shared, prefix: await redisPrefix() }), claims),
    );
    rows.push([
      `Redis claim latency, one client for all (${claims} claims, held)`,
      warm.text,
      'p99 < 10 ms',
      warm.p99 < 10 ? 'met' : 'MISSED',
    ]);
    const cold = summary(
      await claimLatencies(
        redisMachineId({ ...base, url: redis.url, prefix: await redisPrefix() }),
        Math.min(claims, 100),
      ),
    );
    rows.push([
      `Redis claim latency, a new client per claim (${Math.min(claims, 100)}, connecting included)`,
      cold.text,
      '',
      '',
    ]);

    const etcdWarm = summary(
      await claimLatencies(etcdMachineId({ ...base, client: etcdClient, prefix: etcdPrefix() }), claims),
    );
    rows.push([
      `etcd claim latency, one client for all, same run (${claims} claims, held)`,
      etcdWarm.text,
      '',
      '',
    ]);

    for (const [label, make] of /** @type {const} */ ([
      [
        'Redis, one client shared',
        async () => {
          const prefix = await redisPrefix();
          return () => redisMachineId({ ...base, client: shared, prefix });
        },
      ],
      [
        'Redis, a client each',
        async () => {
          const prefix = await redisPrefix();
          return () => redisMachineId({ ...base, url: redis.url, prefix });
        },
      ],
      [
        'etcd, one client shared (same run)',
        async () => {
          const prefix = etcdPrefix();
          return () => etcdMachineId({ ...base, client: etcdClient, prefix });
        },
      ],
    ])) {
      const { seconds, distinct, failed } = await fill(await make(), claimers);
      const failures = failed.length === 0 ? '' : `; ${failed.length} failed (first: ${failed[0]?.message})`;
      const isRedis = label.startsWith('Redis');
      rows.push([
        `${fmt.int(claimers)} concurrent claimers fill 1,024 IDs (${label})`,
        `${fmt.s(seconds)} s, ${fmt.int(distinct)} distinct IDs of ${fmt.int(claimers)}${failures}`,
        isRedis ? '< 5 s, all distinct' : '',
        isRedis ? (seconds < 5 && distinct === claimers ? 'met' : 'MISSED') : '',
      ]);
    }
    // A rolling restart's claims in a dense field: 16,384 IDs (14 bits), all but 821 held by
    // planted claims, and 821 claims into the rest, 4 in flight, each on a client connected
    // before it (as a pod's is). Past its 3 probes such a claim lists every claim in the index.
    {
      const prefix = `ids-bench:${process.pid}-dense`;
      const field = 2 ** 14;
      const free = 821;
      const freeIds = new Set();
      while (freeIds.size < free) freeIds.add(Math.floor(Math.random() * field));
      const planted = JSON.stringify({
        token: 'ab'.repeat(16),
        host: 'bench',
        pid: 1,
        started: new Date().toISOString(),
      });
      const until = Date.now() + 600_000;
      const pipeline = admin.pipeline();
      for (let id = 0; id < field; id++) {
        pipeline.set(`{${prefix}}:time:${id}`, String(Date.now() - 60_000));
        if (freeIds.has(id)) continue;
        pipeline.set(`{${prefix}}:${id}`, planted, 'PX', 600_000);
        pipeline.zadd(`{${prefix}}:claims`, until, String(id));
      }
      await pipeline.exec();
      const times = [];
      const held = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < free) {
            next++;
            const client = new Redis(redis.url, {
              lazyConnect: true,
              enableOfflineQueue: false,
              maxRetriesPerRequest: 0,
            });
            await client.connect();
            const t1 = performance.now();
            const claim = await redisMachineId({ ...base, client, prefix })({ bits: 14 });
            times.push(performance.now() - t1);
            held.push({ claim, client });
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      await Promise.all(held.map(({ claim }) => claim.release().catch(() => undefined)));
      for (const { client } of held) client.disconnect();
      rows.push([
        `Redis claim at 95% to 100% of a 14-bit field (16,384), ${free} claims, 4 in flight, each client connected before`,
        `${summary(times).text}; all ${fmt.s(seconds)} s`,
        '',
        '',
      ]);
    }
    shared.disconnect();
  } finally {
    admin.disconnect();
    etcdClient.close();
    await redis.close();
    await etcd.stop();
  }
  return {
    title: `Claiming machine IDs from Redis on loopback, beside etcd (${externalRedis ? 'IDS_REDIS_URL' : 'redis-server started here, no persistence'}; ${externalEtcd ? 'ETCD_ENDPOINTS' : 'etcd started here'}; load average ${load} on ${cpus().length} cores at the start)`,
    table: formatTable(['measure', 'result', 'target', ''], rows),
  };
}
