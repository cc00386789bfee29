// Named locks on a real Redis, etcd and ZooKeeper on loopback, in one run: an uncontended
// acquire+release of @ids/lock beside redlock 4.2.0 and 5.0.0-beta.2 on the same Redis and beside
// one and two bare Redis round trips (PING: the floor of a lock that takes one request to acquire
// and one to release); the hand-off from one holder to the next with 16 waiters on one name, on
// each store (waiters wake only by the store's event: the fallback poll is set past the run); and
// etcd beside the etcd3 client's own lock and a bare etcd write. Starts its own redis-server, etcd
// and ZooKeeper.
//
// The machines this runs on are shared (2 cores, other work running), so the rows that are
// compared are measured interleaved: rounds of 100 of each, one after the other, so that a burst
// of load lands on all of them alike.
//
// The prefix's epoch is written first, as on a Redis that has run before: the first lock on a
// Redis that may have forgotten its holders is held one TTL before use on purpose (see the
// @ids/lock README), which is a rule, not a latency.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { etcdLocks } from '@ids/lock/etcd';
import { redisLocks } from '@ids/lock/redis';
import { zookeeperLocks } from '@ids/lock/zookeeper';
import { startEtcd, startRedis, startZookeeper } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import Redlock5 from 'redlock5';
import { formatTable } from './lib/measure.mjs';

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * @param {string} what @param {number[]} times @param {number} [floor] the bare round trip's p50
 * @param {number} [cpuUs] CPU time of this process per run, in µs
 */
function row(what, times, floor, cpuUs) {
  const sorted = [...times].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const ratio = floor ? `${(p50 / floor).toFixed(1)}x` : '';
  return [
    what,
    String(times.length),
    p50.toFixed(3),
    p99.toFixed(3),
    percentile(sorted, 100).toFixed(3),
    ratio,
    cpuUs === undefined ? '' : cpuUs.toFixed(0),
  ];
}

/** Times `n` runs of `fn`, one after the other, after `warm` untimed ones. */
async function times(n, fn, warm = 20) {
  for (let i = 0; i < warm; i++) await fn();
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Times each of `fns` `n` times, interleaved: rounds of `per` runs of each in turn (in a new
 * order each round), after `warm`
 * untimed runs of each (the same number for every row: enough for the JIT to have compiled each
 * row's code before any run is timed, so that no row's figures include its compiling); and the
 * CPU time this process spent per timed run of each, in µs (user + system: the client's own
 * work, which the machine's load does not inflate as it does latency).
 * @template {string} K
 * @param {Record<K, () => Promise<unknown>>} fns
 * @returns {Promise<{ times: Record<K, number[]>, cpuUs: Record<K, number> }>}
 */
async function interleaved(fns, n, per = 100, warm = 1000) {
  const entries = /** @type {[K, () => Promise<unknown>][]} */ (Object.entries(fns));
  const out = /** @type {Record<K, number[]>} */ ({});
  const cpuUs = /** @type {Record<K, number>} */ ({});
  for (const [k, fn] of entries) {
    out[k] = [];
    cpuUs[k] = 0;
    for (let i = 0; i < warm; i++) await fn();
  }
  // The rows run in a new order each round (a seeded shuffle, the same in every run), so that no
  // row always follows the same one: a row that leaves garbage or a timer behind would otherwise
  // tax its successor alone.
  let seed = 1;
  const order = [...entries];
  for (let done = 0; done < n; done += per) {
    for (let i = order.length - 1; i > 0; i--) {
      seed = (seed * 48271) % 2147483647;
      const j = seed % (i + 1);
      [order[i], order[j]] = [
        /** @type {[K, () => Promise<unknown>]} */ (order[j]),
        /** @type {[K, () => Promise<unknown>]} */ (order[i]),
      ];
    }
    for (const [k, fn] of order) {
      const cpu = process.cpuUsage();
      out[k].push(...(await times(Math.min(per, n - done), fn, 0)));
      const used = process.cpuUsage(cpu);
      cpuUs[k] += used.user + used.system;
    }
  }
  for (const [k] of entries) cpuUs[k] /= n;
  return { times: out, cpuUs };
}

/**
 * The floor of a hand-off on this machine, with no lock: a PUBLISH that `subscribers`
 * connections receive (as every waiter's subscriber receives a release's message), and the one
 * it names answering with a PING of its own (as the woken waiter asks for the lock). Timed from
 * the PUBLISH to the PING's answer, as a hand-off is from the release to the next acquire.
 * @param {string} url
 */
async function bareHandoff(url, subscribers, n) {
  const channel = 'bench-bare-handoff';
  const publisher = new Redis(url);
  const pool = await Promise.all(
    Array.from({ length: subscribers }, async () => {
      const listener = new Redis(url);
      await listener.subscribe(channel);
      return { listener, client: new Redis(url) };
    }),
  );
  const out = [];
  for (let i = 0; i < n + 20; i++) {
    const next = pool[i % subscribers];
    if (!next) break;
    const t0 = performance.now();
    const answered = new Promise((resolve) =>
      next.listener.once('message', () => resolve(next.client.ping())),
    );
    await publisher.publish(channel, String(i));
    await answered;
    if (i >= 20) out.push(performance.now() - t0);
  }
  publisher.disconnect();
  for (const { listener, client } of pool) {
    listener.disconnect();
    client.disconnect();
  }
  return out;
}

/**
 * Hand-off: each of `waiters` Locks (own connections, as separate processes would have) takes the
 * lock `rounds` times; the time from a release's start to the next holder's acquire returning.
 * @param {() => Promise<import('@ids/lock').Locks>} open
 */
async function handoff(open, waiters, rounds) {
  const pool = await Promise.all(Array.from({ length: waiters }, open));
  const out = [];
  let releasedAt;
  await Promise.all(
    pool.map(async (l) => {
      for (let i = 0; i < rounds; i++) {
        const lock = await l.acquire('handoff', { waitMs: 60_000 });
        if (releasedAt !== undefined) out.push(performance.now() - releasedAt);
        releasedAt = performance.now();
        await lock.release();
      }
    }),
  );
  await Promise.all(pool.map((l) => l.close()));
  return out;
}

export async function benchLock({ n = 2000, waiters = 16, rounds = 40 } = {}) {
  const load = (loadavg()[0] ?? 0).toFixed(1);
  const redis = await startRedis({ allowExternal: false });
  const etcd = await startEtcd();
  const zk = await startZookeeper();
  const admin = new Redis(redis.url);
  const prefix = `ids-bench-lock-${process.pid}`;
  await admin.set(`{${prefix}}:epoch`, '0');
  const rows = [];
  try {
    /** @type {any} the Redis backend under `locks` (a test seam of redisLocks) */
    let backend;
    const locks = await redisLocks(
      /** @type {import('@ids/lock/redis').RedisLocksOptions} */ ({
        url: redis.url,
        prefix,
        onBackend: (/** @type {unknown} */ b) => {
          backend = b;
        },
      }),
    );
    // The least a fenced lock can do on Redis, with nothing of @ids/lock's around it: one script
    // that takes the key (SET NX PX, as redlock does) and hands out the next fence (INCR), and one
    // that deletes the key if it still holds this token (as redlock's release). No line of
    // waiters, no lease keeper, no first-TTL rule. Redlock takes no fence; this row is the floor
    // that the fence alone sets beside it.
    const fenced = new Redis(redis.url);
    const takeSha = /** @type {string} */ (
      await fenced.script(
        'LOAD',
        "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0",
      )
    );
    const giveSha = /** @type {string} */ (
      await fenced.script(
        'LOAD',
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
      )
    );
    // The same floor on a client whose every command is bounded by ioredis's commandTimeout, a
    // timer armed and cleared per command (as @ids/lock's client was until it bounded its
    // commands with one timer per client, CommandDeadlines in redis.ts): what a timer per
    // command costs, measured beside the rest.
    const fencedBounded = new Redis(redis.url, {
      commandTimeout: 3000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    await new Promise((resolve) => fencedBounded.once('ready', resolve));
    /** @param {Redis} client */
    const fencedTake = async (client) => {
      const token = randomBytes(16).toString('hex');
      if ((await client.evalsha(takeSha, 2, 'bench-floor', 'bench-floor-fence', token, 10_000)) === 0) {
        throw new Error('the fenced floor found its key held');
      }
      await client.evalsha(giveSha, 1, 'bench-floor', token);
    };
    const redlock4Client = new Redis(redis.url);
    const redlock4 = new Redlock([redlock4Client], { retryCount: 0 });
    const redlock5Client = new Redis(redis.url);
    const redlock5 = new Redlock5([redlock5Client], { retryCount: 0 });
    const uncontended = await interleaved(
      {
        ping: () => admin.ping(),
        ping2: async () => {
          await admin.ping();
          await admin.ping();
        },
        ours: async () => (await locks.acquire('bench')).release(),
        fencedFloor: () => fencedTake(fenced),
        fencedBounded: () => fencedTake(fencedBounded),
        // @ids/lock's two scripts through its own client, with none of Locks, Lock or the lease
        // keeper around them: what the fair line and the fence cost on Redis beside the floor.
        backendOnly: async () => {
          const token = randomBytes(16).toString('hex');
          const request = { name: 'bench-backend', token, ttlMs: 10_000, join: true, budgetMs: undefined };
          if (!(await backend.take(request))) throw new Error('the backend found its lock held');
          await backend.release('bench-backend', token);
        },
        redlock4: async () => (await redlock4.lock('bench-redlock4', 10_000)).unlock(),
        redlock5: async () => (await redlock5.acquire(['bench-redlock5'], 10_000)).release(),
      },
      n,
    );
    await locks.close();
    redlock4Client.disconnect();
    redlock5Client.disconnect();
    fenced.disconnect();
    fencedBounded.disconnect();
    const { times: t, cpuUs } = uncontended;
    const floor = percentile(
      [...t.ping].sort((a, b) => a - b),
      50,
    );
    rows.push(row('bare Redis round trip (PING)', t.ping, floor, cpuUs.ping));
    rows.push(row('two bare Redis round trips (PING, PING)', t.ping2, floor, cpuUs.ping2));
    rows.push(row('@ids/lock on Redis: acquire + release', t.ours, floor, cpuUs.ours));
    rows.push(
      row(
        'fenced floor: SET NX PX + INCR, then GET + DEL (2 scripts)',
        t.fencedFloor,
        floor,
        cpuUs.fencedFloor,
      ),
    );
    rows.push(
      row(
        'fenced floor on a client with a timer per command (ioredis commandTimeout)',
        t.fencedBounded,
        floor,
        cpuUs.fencedBounded,
      ),
    );
    rows.push(
      row(
        "@ids/lock's Redis scripts alone (its backend's take + release, no Locks, no keeper)",
        t.backendOnly,
        floor,
        cpuUs.backendOnly,
      ),
    );
    rows.push(row('redlock 4.2.0: lock + unlock', t.redlock4, floor, cpuUs.redlock4));
    rows.push(row('redlock 5.0.0-beta.2: acquire + release', t.redlock5, floor, cpuUs.redlock5));

    const noPoll = 2 ** 31 - 1;
    rows.push(
      row(
        `@ids/lock on Redis: hand-off, ${waiters} waiters (pub/sub, no poll)`,
        await handoff(() => redisLocks({ url: redis.url, prefix, pollMs: noPoll }), waiters, rounds),
        floor,
      ),
    );
    rows.push(
      row(
        `bare hand-off floor, ${waiters} subscribers (PUBLISH, then a PING by the one named)`,
        await bareHandoff(redis.url, waiters, waiters * rounds),
        floor,
      ),
    );

    const elocks = await etcdLocks({ endpoints: etcd.endpoints, prefix: `/${prefix}/` });
    const etcd3 = new Etcd3({ hosts: etcd.endpoints });
    const en = Math.min(n, 400);
    const onEtcd = await interleaved(
      {
        // One write through etcd's consensus: what each request of a lock costs at least.
        put: () => etcd3.put(`/${prefix}-put`).value('x').exec(),
        ours: async () => (await elocks.acquire('bench')).release(),
        etcd3: async () => (await etcd3.lock(`/${prefix}-etcd3/bench`).ttl(10).acquire()).release(),
      },
      en,
      50,
      200,
    );
    await elocks.close();
    etcd3.close();
    rows.push(row('bare etcd write (put)', onEtcd.times.put, undefined, onEtcd.cpuUs.put));
    rows.push(row('@ids/lock on etcd: acquire + release', onEtcd.times.ours, undefined, onEtcd.cpuUs.ours));
    rows.push(
      row('etcd3 1.1.2 client lock: acquire + release', onEtcd.times.etcd3, undefined, onEtcd.cpuUs.etcd3),
    );
    rows.push(
      row(
        // A waiter's poll keeps its etcd lease alive: left at its default (1 s).
        `@ids/lock on etcd: hand-off, ${waiters} waiters (watch; 1 s poll)`,
        await handoff(
          () => etcdLocks({ endpoints: etcd.endpoints, prefix: `/${prefix}-handoff/` }),
          waiters,
          rounds,
        ),
      ),
    );

    const zlocks = await zookeeperLocks({ connect: zk.connect, prefix: `/${prefix}` });
    rows.push(
      row(
        '@ids/lock on ZooKeeper: acquire + release (a session each)',
        await times(en, async () => (await zlocks.acquire('bench')).release()),
      ),
    );
    await zlocks.close();
    rows.push(
      row(
        `@ids/lock on ZooKeeper: hand-off, ${waiters} waiters (watch, no poll)`,
        await handoff(
          () => zookeeperLocks({ connect: zk.connect, prefix: `/${prefix}-handoff`, pollMs: noPoll }),
          waiters,
          rounds,
        ),
      ),
    );
  } finally {
    admin.disconnect();
    await redis.close();
    await etcd.stop();
    await zk.close();
  }
  return {
    title: `Locks: acquire + release and hand-off, in ms (loopback; load average ${load} at the start)`,
    table: formatTable(['what', 'n', 'p50 ms', 'p99 ms', 'max ms', 'p50 / bare Redis', 'CPU µs / run'], rows),
  };
}
