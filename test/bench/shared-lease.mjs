// What 64 machine IDs held by one process cost each store while idle (issue 36 item 2): 64
// claims from one provider, each on a lease of its own (`shareLease: false`, what every release
// before did) and all on one (`shareLease: true`), against a real etcd, Redis and ZooKeeper on
// loopback. Counted by each server, not by the client, over a window of idle holding at a 3 s
// TTL (a keepalive every 800 ms): etcd's lease count and LeaseKeepAlive messages (its /metrics),
// Redis's EVAL requests and the commands run inside them (INFO commandstats), ZooKeeper's connections and packets received (`srvr`,
// its client pings included).
//
// `SHARED_LEASE_MODES=own node test/bench/shared-lease.mjs` measures the lease per claim alone:
// run from a checkout without shareLease, it is the figure before the change.
import { etcdMachineId } from '@ids/machine-etcd';
import { redisMachineId } from '@ids/machine-redis';
import { zookeeperMachineId } from '@ids/machine-zookeeper';
import { fourLetters, startEtcd, startRedis, startZookeeper } from '@ids/test-services';
import { Redis } from 'ioredis';
import { formatTable } from './lib/measure.mjs';

const CLAIMS = 64;
const WINDOW_MS = 8000;
const TIMING = { ttlSeconds: 3, fenceMarginMs: 600, bits: 16 };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** ZooKeeper's `srvr`: connections open and packets received so far. @param {number} port */
async function srvr(port) {
  const text = await fourLetters(port, 'srvr');
  /** @param {string} name */
  const number = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(text)?.[1] ?? Number.NaN);
  return { connections: number('Connections'), received: number('Received') };
}

/** etcd's count of LeaseKeepAlive messages received, from its Prometheus metrics. */
async function etcdKeepalives(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('grpc_server_msg_received_total') && line.includes('grpc_method="LeaseKeepAlive"')) {
      total += Number(line.split(' ').at(-1));
    }
  }
  return total;
}

/** @param {string} url */
async function etcdLeases(url) {
  const res = await fetch(`${url}/v3/lease/leases`, { method: 'POST', body: '{}' });
  const body = /** @type {{ leases?: unknown[] }} */ (await res.json());
  return (body.leases ?? []).length;
}

/**
 * Redis's requests so far (INFO commandstats): the EVALs the holders sent, and every command
 * counted, those the scripts ran inside included (less our own INFO calls).
 */
async function redisCommands(admin) {
  const info = await admin.info('commandstats');
  let all = 0;
  let evals = 0;
  for (const [, name, calls] of info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) {
    if (name === 'info') continue;
    all += Number(calls);
    if (name === 'eval' || name === 'evalsha') evals += Number(calls);
  }
  return { all, evals };
}

/** 64 claims from `provider`, held idle for the window; `count()` read before and after. */
async function hold(provider, count) {
  const claims = [];
  for (let i = 0; i < CLAIMS; i++) claims.push(await provider({ bits: 16 }));
  if (new Set(claims.map((c) => c.machineId)).size !== CLAIMS) throw new Error('IDs not distinct');
  await sleep(1000);
  const before = await count();
  const t0 = performance.now();
  await sleep(WINDOW_MS);
  const after = await count();
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(claims.map((c) => c.release()));
  return { before, after, seconds };
}

export async function benchSharedLease() {
  const modes = (process.env.SHARED_LEASE_MODES ?? 'own,shared').split(',');
  const zk = await startZookeeper({ allowExternal: false });
  const redis = await startRedis({ allowExternal: false });
  const etcd = await startEtcd();
  const admin = new Redis(redis.url);
  const etcdUrl = /** @type {string} */ (etcd.endpoints[0]);
  const rows = [];
  try {
    // Recorded times for every ID, as in a Redis that has run before: no claim waits a TTL.
    const past = String(Date.now() - 60_000);
    for (let from = 0; from < 2 ** 16; from += 4096) {
      await admin.mset(
        ...Array.from({ length: 4096 }, (_, i) => [`{ids:machine-id}:time:${from + i}`, past]).flat(),
      );
    }
    for (const mode of modes) {
      const shareLease = mode === 'shared';
      const label = shareLease ? 'one lease (shareLease)' : 'a lease per claim';
      {
        let leases = 0;
        const r = await hold(
          etcdMachineId({ endpoints: etcd.endpoints, ...TIMING, shareLease }),
          async () => {
            leases = Math.max(leases, await etcdLeases(etcdUrl));
            return etcdKeepalives(etcdUrl);
          },
        );
        rows.push([
          'etcd',
          label,
          String(leases),
          `${((r.after - r.before) / r.seconds).toFixed(1)} LeaseKeepAlive/s`,
        ]);
      }
      {
        const r = await hold(redisMachineId({ url: redis.url, ...TIMING, shareLease }), () =>
          redisCommands(admin),
        );
        const rate = (key) => ((r.after[key] - r.before[key]) / r.seconds).toFixed(1);
        rows.push(['redis', label, '-', `${rate('evals')} EVAL/s (${rate('all')} commands/s inside)`]);
      }
      {
        let connections = 0;
        const r = await hold(zookeeperMachineId({ connect: zk.connect, ...TIMING, shareLease }), async () => {
          const s = await srvr(zk.port);
          connections = Math.max(connections, s.connections);
          return s.received;
        });
        // Each srvr is a connection and a packet of its own.
        rows.push([
          'zookeeper',
          label,
          `${connections - 1} sessions`,
          `${((r.after - r.before - 1) / r.seconds).toFixed(1)} packets/s`,
        ]);
      }
    }
  } finally {
    admin.disconnect();
    await zk.close();
    await redis.close();
    await etcd.stop();
  }
  return {
    title: `${CLAIMS} machine IDs held idle by one process, TTL ${TIMING.ttlSeconds} s, ${WINDOW_MS / 1000} s window: store operations per second`,
    table: formatTable(['store', 'claims on', 'leases / sessions', 'store operations'], rows),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { title, table } = await benchSharedLease();
  console.log(`## ${title}\n\n${table}`);
}
