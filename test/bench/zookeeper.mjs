// Claiming machine IDs from a real ZooKeeper on loopback, beside etcd and Redis in the same run:
// the latency of one claim, and 1,000 claimers filling a 10-bit field (1,024 IDs), with the time
// of the whole fill and the p99 of each claim. Each ZooKeeper claim opens its own session (the
// session is the lease), so etcd and Redis are measured the same way: a client per claim.
// Starts its own ZooKeeper, etcd and redis-server (Debian's: `node scripts/ensure-services.mjs`).
//
// Redis's recorded times are seeded first, as in a fleet that has run before: the first claim of
// an ID whose past Redis does not know waits one TTL on purpose (see the machine-redis README).
import { cpus, loadavg } from 'node:os';
import { etcdMachineId } from '@ids/machine-etcd';
import { redisMachineId } from '@ids/machine-redis';
import { zookeeperMachineId } from '@ids/machine-zookeeper';
import { ZkSession } from '@ids/machine-zookeeper/internal';
import { startEtcd, startRedis, startZookeeper } from '@ids/test-services';
import { Redis } from 'ioredis';
import { claimLatencies, fmt, formatTable } from './lib/measure.mjs';

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** @param {number[]} times */
function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${fmt.ms(percentile(sorted, 50))} ms, p99 ${fmt.ms(percentile(sorted, 99))} ms, max ${fmt.ms(percentile(sorted, 100))} ms`;
}

/**
 * `claimers` concurrent claims on a 10-bit field: the seconds for all, each claim's own time,
 * and the distinct IDs.
 * @param {(context: { bits: number }) => Promise<{ machineId: number, release(): Promise<void> }>} provider
 * @param {number} claimers
 */
async function fill(provider, claimers) {
  const t0 = performance.now();
  const each = [];
  const settled = await Promise.allSettled(
    Array.from({ length: claimers }, async () => {
      const start = performance.now();
      const claim = await provider({ bits: 10 });
      each.push(performance.now() - start);
      return claim;
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const held = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
  const distinct = new Set(held.map((c) => c.machineId)).size;
  await Promise.all(held.map((c) => c.release().catch(() => undefined)));
  return { seconds, each, distinct, failed };
}

export async function benchZookeeper({ claims = 200, claimers = 1000 } = {}) {
  const load = (loadavg()[0] ?? 0).toFixed(1);
  const zk = await startZookeeper({ allowExternal: false, tickTimeMs: 500 });
  const redis = await startRedis({ allowExternal: false });
  const etcd = await startEtcd();
  const admin = new Redis(redis.url);
  const session = await ZkSession.open(zk.connect, {
    sessionTimeoutMs: 30_000,
    timeoutMs: 30_000,
    feature: 'machine-id',
  });
  const rows = [];
  let run = 0;
  const zkPath = () => `/ids-bench/${process.pid}-${run++}`;
  const etcdPrefix = () => `/ids-bench/${process.pid}-${run++}`;
  const redisPrefix = async () => {
    const prefix = `ids-bench:${process.pid}-${run++}`;
    const seeded = Date.now() - 60_000;
    const pipeline = admin.pipeline();
    for (let id = 0; id < 1024; id++) pipeline.set(`{${prefix}}:time:${id}`, String(seeded));
    await pipeline.exec();
    return prefix;
  };
  try {
    const base = { ttlSeconds: 10, timeoutMs: 30_000 };
    await claimLatencies(zookeeperMachineId({ ...base, connect: zk.connect, path: zkPath() }), 20);

    const floor = [];
    const reads = [];
    const writes = [];
    await session.mkdirp('/ids-bench/baseline');
    for (let i = 0; i < claims; i++) {
      let t0 = performance.now();
      await session.exists('/ids-bench/baseline');
      reads.push(performance.now() - t0);
      t0 = performance.now();
      await session.setData('/ids-bench/baseline', String(i), -1);
      writes.push(performance.now() - t0);
    }
    rows.push([`baseline: a bare ZooKeeper read (exists, ${claims})`, summary(reads), '', '']);
    rows.push([`baseline: a bare ZooKeeper write (setData, ${claims})`, summary(writes), '', '']);
    // The floor under one claim: what any ZooKeeper claim must do at least, with no check of
    // the layout and no recorded time read: open a session (a write: the server creates it) and
    // create the ephemeral node (a write), then close. A claim above this by little is bound by
    // the server (and on a loaded machine, by the CPU it gets), not by the holder.
    await session.mkdirp('/ids-bench/floor');
    for (let i = 0; i < claims; i++) {
      const t0 = performance.now();
      const bare = await ZkSession.open(zk.connect, {
        sessionTimeoutMs: 10_000,
        timeoutMs: 30_000,
        feature: 'machine-id',
      });
      await bare.create(`/ids-bench/floor/${i}`, '', 'ephemeral');
      floor.push(performance.now() - t0);
      await bare.close();
    }
    rows.push([
      `floor: a bare session open + one ephemeral create, one after another (${claims})`,
      summary(floor),
      '',
      '',
    ]);

    const path = zkPath();
    const sequential = await claimLatencies(
      zookeeperMachineId({ ...base, connect: zk.connect, path }),
      claims,
    );
    const p99 = percentile(sequential, 99);
    rows.push([
      `ZooKeeper claim latency, one after another (${claims}, held; a session each, connecting included)`,
      summary(sequential),
      'p99 < 20 ms',
      p99 < 20
        ? 'met'
        : `missed (floor p99 ${fmt.ms(
            percentile(
              [...floor].sort((a, b) => a - b),
              99,
            ),
          )} ms)`,
    ]);

    for (const [label, make] of /** @type {const} */ ([
      [
        'ZooKeeper, a session each',
        async () => zookeeperMachineId({ ...base, connect: zk.connect, path: zkPath() }),
      ],
      [
        'etcd, a client each (same run)',
        async () => etcdMachineId({ ...base, endpoints: etcd.endpoints, prefix: etcdPrefix() }),
      ],
      [
        'Redis, a client each (same run)',
        async () => redisMachineId({ ...base, url: redis.url, prefix: await redisPrefix() }),
      ],
    ])) {
      const { seconds, each, distinct, failed } = await fill(await make(), claimers);
      const failures = failed.length === 0 ? '' : `; ${failed.length} failed (first: ${failed[0]?.message})`;
      rows.push([
        `${fmt.int(claimers)} concurrent claimers fill 1,024 IDs (${label})`,
        `${fmt.s(seconds)} s, ${fmt.int(distinct)} distinct IDs of ${fmt.int(claimers)}; per claim ${summary(each)}${failures}`,
        '< 10 s',
        seconds < 10 ? 'met' : 'missed',
      ]);
    }
  } finally {
    await session.close();
    admin.disconnect();
    await zk.close();
    await redis.close();
    await etcd.stop();
  }
  return {
    title: `Claiming machine IDs from ZooKeeper on loopback, beside etcd and Redis (ZooKeeper 3.8 standalone, tickTime 500 ms, started here; load average ${load} on ${cpus().length} cores at the start)`,
    table: formatTable(['measure', 'result', 'target', ''], rows),
  };
}
