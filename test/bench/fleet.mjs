// The fleet simulator (issue 36): N holders of machine IDs against one etcd, one Redis and one
// ZooKeeper started here, each holder its own client (its own lease; on ZooKeeper its own
// session), as separate pods would be, spread over CHILDREN child processes (fleet-child.mjs).
// The layout's machine field is just wide enough for N (14 bits for 16,384), so the fleet fills
// it. Per store it reports: the time to fill the field and, per tenth of fill, the claim p50/p99
// as a pod sees it (its client connected first, as a pod connects when it starts; the claim timed
// from the provider call to the first ID, `--claim-concurrency` claims in flight over the fleet),
// the connect + claim beside it, and a bare round trip to the store at the same concurrency (the
// floor under a claim on the machine as loaded then);
// the claim past a full field; steady-state store operations per second, idle (keepalives only)
// and issuing (keepalives plus the recorded time, once a second per holder), with the store
// server's CPU and memory and the holders' per 1,000; a rolling restart of 10% of the holders
// (one tenth of the processes, half stopped gracefully, half SIGKILLed, each holder replaced
// by a pod of its own) while the fleet keeps issuing, with every issued ID checked for
// duplicates, and per replacement the time from the stop to its first ID in parts (its queue
// for a start, its connect, attempts refused by a full field, its claim), each checked against
// the bound of its kind of stop (restartFigures). IDS_FLEET_CPU_PROF=DIR profiles the
// replacement processes. On ZooKeeper it also measures the server's request capacity for the
// requests a keepalive could be (see zkCapacity).
//
// `npm run bench -- fleet --holders 1024 [--ttl 10] [--window 20] [--claim-concurrency 4]
//  [--restart-concurrency 8] [--stores etcd,redis,zookeeper]`; `--ttl` is the holders' lease
// TTL in seconds (keepalives scale as 1/TTL: the capacity model below); `--restart-concurrency`
// the replacement pods starting at a time per stopped process in the rolling restart.
// Run directly (`node test/bench/fleet.mjs ... --json`) it prints the raw figures as one JSON
// line; test/fleet.test.ts runs it at N=64 so it cannot rot.
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ZkSession } from '@ids/machine-zookeeper/internal';
import { fourLetters, startEtcd, startRedis, startZookeeper } from '@ids/test-services';
import { Redis } from 'ioredis';
import { fmt, formatTable } from './lib/measure.mjs';

const CHILD = fileURLToPath(new URL('./fleet-child.mjs', import.meta.url));
/** Ten per tenth of the fleet: the rolling restart takes two of them, one stopped, one killed. */
const CHILDREN = 20;
/** Claims in flight per child while filling: a fleet starting up, not a thundering herd. */
const CONCURRENCY = 4;
const TICKS = 100; // USER_HZ on Linux: /proc/PID/stat's CPU times are in these

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Progress on stderr: a big run takes minutes per store. */
const progress = (...what) => console.error(`fleet ${new Date().toISOString().slice(11, 19)}`, ...what);

/** @param {string[]} argv */
export function fleetArgs(argv) {
  const value = (name, fallback) => {
    const at = argv.indexOf(name);
    return at === -1 ? fallback : argv[at + 1];
  };
  const holders = Number(value('--holders', 1024));
  const ttlSeconds = Number(value('--ttl', 10));
  const windowSeconds = Number(value('--window', 20));
  const stores = String(value('--stores', 'etcd,redis,zookeeper')).split(',');
  const claimConcurrency = Number(value('--claim-concurrency', 4));
  const restartConcurrency = Number(value('--restart-concurrency', 8));
  if (!Number.isInteger(holders) || holders < CHILDREN || holders > 2 ** 20) {
    throw new Error(
      `--holders: expected a whole number from ${CHILDREN} to 1,048,576, received ${value('--holders')}`,
    );
  }
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 2) {
    throw new Error(`--ttl: expected whole seconds, 2 or more, received ${value('--ttl')}`);
  }
  if (!Number.isInteger(claimConcurrency) || claimConcurrency < 1) {
    throw new Error(
      `--claim-concurrency: expected a whole number, 1 or more, received ${value('--claim-concurrency')}`,
    );
  }
  if (!Number.isInteger(restartConcurrency) || restartConcurrency < 1) {
    throw new Error(
      `--restart-concurrency: expected a whole number, 1 or more, received ${value('--restart-concurrency')}`,
    );
  }
  if (!(windowSeconds >= 1))
    throw new Error(`--window: expected seconds, 1 or more, received ${value('--window')}`);
  for (const store of stores) {
    if (!['etcd', 'redis', 'zookeeper'].includes(store)) {
      throw new Error(`--stores: expected etcd, redis or zookeeper, received ${store}`);
    }
  }
  return { holders, ttlSeconds, windowSeconds, stores, claimConcurrency, restartConcurrency };
}

/** `count` runs of `fn(k)`, k = 0, 1, ..., `concurrency` at a time. */
async function inTurn(count, concurrency, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
const pcts = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
    n: sorted.length,
  };
};

// --- processes: CPU and memory from /proc ---------------------------------------------------

/** @param {number} pid */
function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    // fields[11], [12] are utime and stime (the 14th and 15th of the whole line).
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]), rssKb };
  } catch {
    return undefined;
  }
}

/** A process and its descendants (zkServer.sh starts the JVM as its child). */
function tree(pid) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = procStat(Number(name));
    if (stat) children.set(Number(name), stat.ppid);
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    for (const [child, parent] of children) if (parent === all[i]) all.push(child);
  }
  return all;
}

/** The process whose command line names `text` (etcd's data directory: the starter keeps no pid). */
function pidByCommandLine(text) {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text)) return Number(name);
    } catch {}
  }
  return undefined;
}

/** Summed CPU ticks and RSS of some processes. */
function usage(pids) {
  let cpuTicks = 0;
  let rssKb = 0;
  for (const pid of pids) {
    const stat = procStat(pid);
    if (!stat) continue;
    cpuTicks += stat.cpuTicks;
    rssKb += stat.rssKb;
  }
  return { cpuTicks, rssKb, at: performance.now() };
}

/** The whole machine: CPU ticks busy and in all (/proc/stat), and MemAvailable. */
function machine() {
  const cpu =
    readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = cpu.reduce((sum, x) => sum + x, 0);
  // idle and iowait are the 4th and 5th fields.
  const busy = total - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  const memAvailableKb = Number(
    /MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0,
  );
  return { busy, total, memAvailableKb };
}

// --- the fleet's processes -------------------------------------------------------------------

class Node {
  /** @param {object} config */
  constructor(config) {
    this.seq = 0;
    this.pending = new Map();
    this.proc = fork(CHILD, [JSON.stringify(config)], {
      execArgv: config.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${config.profileDir}`] : [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.ready = new Promise((resolve, reject) => {
      this.proc.once('exit', (code, signal) => {
        const error = new Error(`fleet child exited (${code ?? signal})`);
        reject(error);
        for (const { reject: fail } of this.pending.values()) fail(error);
      });
      this.proc.on('message', (/** @type {any} */ message) => {
        if (message.ready) return resolve(undefined);
        const waiting = this.pending.get(message.seq);
        this.pending.delete(message.seq);
        if (message.ok) waiting?.resolve(message.value);
        else waiting?.reject(new Error(message.error));
      });
    });
  }

  /** @param {string} cmd @param {object} [args] */
  async call(cmd, args) {
    await this.ready;
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      // A node being stopped in the rolling restart may still be asked to issue by the churn
      // loop: its closed channel is that call's failure, not an unhandled 'error' event.
      if (!this.proc.connected) return reject(new Error(`fleet child disconnected (${cmd})`));
      this.pending.set(seq, { resolve, reject });
      this.proc.send({ seq, cmd, args }, (error) => {
        if (!error) return;
        this.pending.delete(seq);
        reject(error);
      });
    });
  }

  async stop() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.disconnect();
    await this.exited;
  }

  async kill() {
    this.proc.kill('SIGKILL');
    await this.exited;
  }
}

/** Splits `count` over `parts` as evenly as whole numbers allow. */
const split = (count, parts) =>
  Array.from({ length: parts }, (_, i) => Math.floor(count / parts) + (i < count % parts ? 1 : 0));

/** A replacement's pause between claims refused because the field is full. */
const RETRY_PAUSE_MS = 200;

/**
 * How late, past the TTL after a kill, a store may still hold a killed holder's claim, by its
 * own expiry rule: Redis expires the key itself at the last keepalive's run + TTL (0); etcd's
 * leader looks for expired leases every 500 ms and revokes them through raft; ZooKeeper
 * expires sessions in buckets of one tick (500 ms here) and then deletes their nodes.
 */
const EXPIRY_SLACK_MS = { redis: 0, etcd: 500, zookeeper: 500 };

/**
 * The rolling restart's figures for one stopped node's replacements, and the bound each is
 * held to (README, "Fleet capacity"). A pod's wait from the stop to its first ID is its queue
 * for a start + its connect + its refused attempts (a full field) + the claim that held. The
 * product's part is the last two: a gracefully stopped holder released its ID before it
 * stopped, so its replacement is never refused (bound: one claim); a killed holder's lease
 * lives until its TTL runs out, so a replacement may be refused until then, and no attempt
 * started later than TTL + the store's expiry slack after the kill may be (bound: TTL + slack +
 * one retry pause + one claim). `violations` counts the pods past their bound.
 * @param {string} kind @param {'graceful' | 'killed'} how @param {number} stoppedAt
 * @param {any[]} claims @param {number} ttlSeconds
 */
function restartFigures(kind, how, stoppedAt, claims, ttlSeconds) {
  const latest = how === 'graceful' ? 0 : ttlSeconds * 1000 + EXPIRY_SLACK_MS[kind];
  let violations = 0;
  let lastRefusal = Number.NEGATIVE_INFINITY;
  let refused = 0;
  for (const c of claims) {
    refused += c.refused.length;
    for (const [start] of c.refused) lastRefusal = Math.max(lastRefusal, start - stoppedAt);
    const late =
      how === 'graceful' ? c.refused.length > 0 : c.refused.some(([start]) => start - stoppedAt > latest);
    if (late) violations++;
  }
  return {
    ...pcts(claims.map((c) => c.at - stoppedAt)),
    queue: pcts(claims.map((c) => c.startedAt - stoppedAt)),
    connect: pcts(claims.map((c) => c.connectMs)),
    // Two clocks (the wall clock's stamps, the connect's duration): never below 0.
    refusedFor: pcts(claims.map((c) => Math.max(0, c.claimAt - c.startedAt - c.connectMs))),
    claim: pcts(claims.map((c) => c.ms)),
    // What a pod started at the stop would wait: all of it but the simulator's queue.
    podWait: pcts(claims.map((c) => c.at - c.startedAt)),
    refusedAttempts: refused,
    lastRefusalAfterStopMs: Number.isFinite(lastRefusal) ? lastRefusal : undefined,
    latestRefusalAllowedMs: latest,
    violations,
  };
}

// --- the stores ------------------------------------------------------------------------------

/** Requests the server has handled so far, by its own counter. */
const counters = {
  /**
   * Requests a client sent: the scripts run (every keepalive, claim, record and release is one
   * script). INFO's total_commands_processed would also count each command a script runs.
   * @param {{ admin: Redis }} s
   */
  redis: async (s) => {
    let total = 0;
    for (const [, name, calls] of (await s.admin.info('commandstats')).matchAll(
      /cmdstat_(\w+):calls=(\d+)/g,
    )) {
      if (/^(eval|evalsha|evalsha_ro|eval_ro|fcall)$/.test(name ?? '')) total += Number(calls ?? 0);
    }
    return total;
  },
  /** Every gRPC message etcd received: keepalives (one per stream message) and unary calls. */
  etcd: async (s) => {
    const text = await (await fetch(`${s.target}/metrics`)).text();
    let total = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith('grpc_server_msg_received_total{')) total += Number(line.split(' ').pop());
    }
    return total;
  },
  /** `srvr`'s Received: every packet the server read, pings included. */
  zookeeper: async (s) => Number(/Received: (\d+)/.exec(await fourLetters(s.port, 'srvr'))?.[1]),
};

async function startStore(kind, holders) {
  if (kind === 'redis') {
    // Redis caps maxclients at its file limit less 32; the default 10,000 is below a big fleet.
    const server = await startRedis({ allowExternal: false, args: ['--maxclients', String(holders + 1000)] });
    return {
      server,
      target: server.url,
      admin: new Redis(server.url),
      pids: () => tree(server.pid),
      stop: () => server.close(),
    };
  }
  if (kind === 'etcd') {
    const server = await startEtcd();
    const target = server.endpoints[0];
    const pid = pidByCommandLine(server.members[0]?.dataDir ?? server.endpoints[0] ?? '');
    return { server, target, pids: () => (pid ? [pid] : []), stop: () => server.stop() };
  }
  // A session holds about 1 KiB of the server's heap with its connection's buffers; 96 MiB (the
  // tests' heap) is too small for tens of thousands. tickTime 500 ms: the session timeouts asked
  // (the TTL) are whole ticks.
  const server = await startZookeeper({ allowExternal: false, tickTimeMs: 500, heapMb: 1024 });
  return {
    server,
    target: server.connect,
    port: server.port,
    pids: () => tree(server.pid),
    stop: () => server.close(),
  };
}

// --- ZooKeeper's request capacity --------------------------------------------------------------

/**
 * Requests per second a standalone ZooKeeper answers from `sessions` clients with `depth`
 * requests in flight each, for the requests a keepalive could be:
 * - `multi [check]`, today's keepalive: a transaction, so the server logs it (and fsyncs the
 *   log) like any write, but it proves more than a read can: it is ordered through the leader,
 *   whose session tracker refuses a request of a session it has expired, and a follower cannot
 *   answer it alone, so a confirmed keepalive sent at `t` means the leader held the session
 *   alive after `t`. That is the rule the holder's fencing depends on.
 * - `setData`: an ordinary write, for scale (the same path through the leader and the log).
 * - `exists`: a read, the cheapest request there is, but a follower answers it from its own
 *   copy, cut off from the leader or not: it does not prove the session alive at the leader, so
 *   it cannot be the keepalive. (ZooKeeper's `sync` and its ping are answered without the log,
 *   but this package's client sends neither as a request a claim could wait on.)
 */
async function zkCapacity(connect, { sessions = 8, depth = 8, seconds = 4 } = {}) {
  const clients = await Promise.all(
    Array.from({ length: sessions }, () =>
      ZkSession.open(connect, { sessionTimeoutMs: 30_000, timeoutMs: 30_000, feature: 'machine-id' }),
    ),
  );
  const path = '/ids-fleet-capacity';
  await clients[0]?.mkdirp(path);
  const kinds = {
    'multi [check] (the keepalive)': (c) => c.multi([{ op: 'check', path, version: -1 }]),
    'setData (a write)': (c, i) => c.setData(path, String(i), -1),
    'exists (a read)': (c) => c.exists(path),
  };
  const result = {};
  try {
    for (const [label, request] of Object.entries(kinds)) {
      let done = 0;
      const until = performance.now() + seconds * 1000;
      await Promise.all(
        clients.flatMap((client) =>
          Array.from({ length: depth }, async () => {
            while (performance.now() < until) {
              await request(client, done);
              done++;
            }
          }),
        ),
      );
      result[label] = done / seconds;
    }
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  }
  return result;
}

/** What a run has so far, printed if it is interrupted (SIGINT: `timeout --signal=INT`). */
const sofar = { run: /** @type {any} */ (undefined), current: /** @type {any} */ (undefined) };

// --- one store's run -------------------------------------------------------------------------

async function runStore(kind, { holders, ttlSeconds, windowSeconds, claimConcurrency, restartConcurrency }) {
  const bits = Math.ceil(Math.log2(holders));
  const field = 2 ** bits;
  const store = await startStore(kind, holders);
  const prefix = kind === 'redis' ? `ids-fleet:${process.pid}` : `/ids-fleet/${process.pid}`;
  const config = { store: kind, target: store.target, prefix, bits, ttlSeconds };
  /** @type {Node[]} */
  let nodes = [];
  /** @type {Record<string, any>} */
  const out = { store: kind, holders, bits, field, errors: [] };
  sofar.current = out;
  try {
    if (kind === 'redis') {
      // Recorded times seeded, as in a fleet that has run before: a first claim of an ID whose
      // past Redis does not know waits one TTL on purpose (see the machine-redis README).
      const seeded = String(Date.now() - 60_000);
      const pipeline = /** @type {Redis} */ (store.admin).pipeline();
      for (let id = 0; id < field; id++) pipeline.set(`{${prefix}}:time:${id}`, seeded);
      await pipeline.exec();
    }
    if (kind === 'zookeeper') out.zkCapacity = await zkCapacity(store.target);

    nodes = Array.from({ length: CHILDREN }, () => new Node(config));
    await Promise.all(nodes.map((n) => n.ready));
    // What the processes weigh with no holder: taken off the holders' memory per 1,000.
    const baseRssKb = usage(nodes.map((n) => n.proc.pid)).rssKb;
    out.fleetBaseRssMb = baseRssKb / 1024;

    const issued = new Set();
    let duplicates = 0;
    const keep = (ids) => {
      for (const id of ids) {
        if (issued.has(id)) duplicates++;
        issued.add(id);
      }
      // Kept current, so that an interrupted run still reports its check.
      out.issuedIds = issued.size;
      out.duplicateIds = duplicates;
    };
    /** Machine ID -> the node holding it, by what the nodes reported. */
    const held = new Map();
    let heldTwice = 0;
    const take = (node, claims) => {
      for (const c of claims) {
        if (held.has(c.machineId)) heldTwice++;
        held.set(c.machineId, node);
        keep([c.id]);
      }
    };

    // Fill, a tenth at a time (the last tenth in two: to 99%, then to 100%). Each step: the new
    // holders' clients connect (as pods connect when they start, CONCURRENCY per process), then
    // they claim, `claimConcurrency` at a time over the whole fleet (the processes in turn), then
    // as many bare round trips run at the same concurrency: the floor under a claim, measured on
    // the machine as loaded at that moment.
    const bounds = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1].map((f) => Math.round(f * holders));
    out.fill = [];
    const fill0 = performance.now();
    let before = 0;
    for (const bound of bounds) {
      const count = bound - before;
      const shares = split(count, nodes.length);
      const connects = await Promise.all(
        nodes.map((n, i) =>
          (shares[i] ?? 0) > 0
            ? n.call('connect', { count: shares[i], concurrency: CONCURRENCY })
            : { ms: [] },
        ),
      );
      /** The processes in turn (0, 1, ..., 19, 0, 1, ...), each as often as it has clients waiting. */
      const queue = [];
      for (let round = 0; queue.length < count; round++) {
        for (const [i, share] of shares.entries()) if ((share ?? 0) > round) queue.push(i);
      }
      const claims = [];
      const errors = [];
      // The live holders' keepalives run through the claims: their rate just before (one
      // second) is taken off the requests counted during the claims.
      const quiet0 = { ops: await counters[kind](store), at: performance.now() };
      await sleep(1000);
      const ops0 = await counters[kind](store);
      const claim0 = performance.now();
      const background = (ops0 - quiet0.ops) / ((claim0 - quiet0.at) / 1000);
      await inTurn(queue.length, claimConcurrency, async (k) => {
        const i = /** @type {number} */ (queue[k]);
        const node = /** @type {Node} */ (nodes[i]);
        const answer = await node.call('claim', { count: 1, concurrency: 1 });
        take(node, answer.claims);
        claims.push(...answer.claims);
        errors.push(...answer.errors);
      });
      const claimSeconds = (performance.now() - claim0) / 1000;
      const ops1 = await counters[kind](store);
      const reads = [];
      const writes = [];
      await inTurn(Math.min(count, 400), claimConcurrency, async (k) => {
        const answer = await nodes[k % nodes.length]?.call('roundTrip', { count: 1 });
        reads.push(...answer.read);
        writes.push(...answer.write);
      });
      out.errors.push(...errors.slice(0, 3));
      out.fill.push({
        upTo: bound / holders,
        claims: count,
        failed: errors.length,
        claimsPerSecond: claims.length / claimSeconds,
        requestsPerClaim: (ops1 - ops0 - background * claimSeconds) / Math.max(1, claims.length),
        backgroundPerSecond: background,
        ...pcts(claims.map((c) => c.ms)),
        connect: pcts(connects.flatMap((c) => c.ms)),
        connectPlusClaim: pcts(claims.map((c) => c.connectMs + c.ms)),
        read: pcts(reads),
        write: pcts(writes),
      });
      before = bound;
    }
    out.fillSeconds = (performance.now() - fill0) / 1000;
    progress(kind, `filled in ${out.fillSeconds.toFixed(1)} s`);
    out.live = held.size;

    if (holders === field) out.overfull = await nodes[0]?.call('overfull');

    // Steady state: keepalives only, then with every holder issuing (recording its time).
    const sample = async () => ({
      ops: await counters[kind](store),
      server: usage(store.pids()),
      fleet: usage(nodes.map((n) => n.proc.pid)),
      machine: machine(),
    });
    const measure = async (issuing) => {
      const a = await sample();
      const until = performance.now() + windowSeconds * 1000;
      while (performance.now() < until) {
        if (issuing)
          for (const answer of await Promise.all(nodes.map((n) => n.call('issue')))) keep(answer.ids);
        await sleep(issuing ? 1000 : until - performance.now());
      }
      const b = await sample();
      const seconds = (b.server.at - a.server.at) / 1000;
      return {
        opsPerSecond: (b.ops - a.ops) / seconds,
        serverCpu: (b.server.cpuTicks - a.server.cpuTicks) / TICKS / seconds,
        serverRssMb: b.server.rssKb / 1024,
        fleetCpuPer1000: (b.fleet.cpuTicks - a.fleet.cpuTicks) / TICKS / seconds / (held.size / 1000),
        fleetRssMbPer1000: (b.fleet.rssKb - baseRssKb) / 1024 / (held.size / 1000),
        fleetCpu: (b.fleet.cpuTicks - a.fleet.cpuTicks) / TICKS / seconds,
        fleetRssMb: b.fleet.rssKb / 1024,
        machineBusy: (b.machine.busy - a.machine.busy) / Math.max(1, b.machine.total - a.machine.total),
        memAvailableMb: b.machine.memAvailableKb / 1024,
      };
    };
    // Let the claims' keepalive timers spread out (they start at each claim) before measuring.
    await sleep(Math.min(5, ttlSeconds) * 1000);
    out.idle = await measure(false);
    progress(kind, 'idle window measured');
    out.issuing = await measure(true);
    progress(kind, 'issuing window measured');

    // Rolling restart of a tenth of the fleet while the rest keep issuing: node 0's holders
    // stopped gracefully, then node 1's killed, each holder replaced by one pod of its own (its
    // own client and claim), `restartConcurrency` pods starting at a time in a fresh process
    // forked before the stop (a process start is the platform's cost, not the claim's). Each
    // pod connects when it starts, then claims; a full field (the killed leases not expired yet)
    // is retried every RETRY_PAUSE_MS. Per pod: the wait from the stop to its first ID, in
    // parts: its queue for a start (the simulator's: two cores cannot start 1,600 pods at
    // once), its connect, its refused attempts, its claim. The bound each part is held to is
    // restartBound's.
    out.restart = [];
    let churning = true;
    const churn = (async () => {
      while (churning) {
        const answers = await Promise.all(nodes.map((n) => n.call('issue').catch(() => ({ ids: [] }))));
        for (const answer of answers) keep(answer.ids);
        await sleep(1000);
      }
    })();
    for (const [index, how] of /** @type {const} */ ([
      [0, 'graceful'],
      [1, 'killed'],
    ])) {
      const old = /** @type {Node} */ (nodes[index]);
      let count = 0;
      for (const node of held.values()) if (node === old) count++;
      // IDS_FLEET_CPU_PROF=DIR: the replacement processes write a CPU profile there at exit.
      const fresh = new Node({ ...config, profileDir: process.env.IDS_FLEET_CPU_PROF });
      await fresh.ready;
      let stoppedAt;
      let exitedAt;
      if (how === 'graceful') {
        const { released } = await old.call('close');
        stoppedAt = Date.now();
        for (const id of released) held.delete(id);
        await old.stop();
        exitedAt = Date.now();
      } else {
        await old.kill();
        stoppedAt = Date.now();
        // Its leases live on until they expire; the store keeps its IDs from the replacement.
        for (const [id, node] of held) if (node === old) held.delete(id);
      }
      nodes[index] = fresh;
      const sentAt = Date.now();
      const answer = await fresh.call('claim', {
        count,
        concurrency: restartConcurrency,
        retryFullMs: 3 * ttlSeconds * 1000,
        retryPauseMs: RETRY_PAUSE_MS,
      });
      take(fresh, answer.claims);
      out.errors.push(...answer.errors.slice(0, 3));
      out.restart.push({
        how,
        replaced: count,
        reclaimed: answer.claims.length,
        failed: answer.errors.length,
        ...restartFigures(kind, how, stoppedAt, answer.claims, ttlSeconds),
        // Where the queue's time went: the old process's exit, the claim command's sending and
        // its arrival in the fresh process, the first pod's start (ms after the stop).
        oldExitedMs: exitedAt === undefined ? undefined : exitedAt - stoppedAt,
        claimSentMs: sentAt - stoppedAt,
        claimReceivedMs: answer.receivedAt - stoppedAt,
        firstPodMs: Math.min(...answer.claims.map((c) => c.startedAt)) - stoppedAt,
      });
      progress(kind, `restart: ${how} node replaced`);
    }
    churning = false;
    await churn;
    const last = await Promise.all(nodes.map((n) => n.call('issue')));
    for (const answer of last) keep(answer.ids);
    out.lateErrors = last.reduce((sum, a) => sum + a.lateErrors, 0);
    out.firstLateError = last.find((a) => a.firstLateError)?.firstLateError ?? '';
    out.issuedIds = issued.size;
    out.duplicateIds = duplicates;
    out.machineIdsHeldTwice = heldTwice;
    out.live = held.size;
  } finally {
    await Promise.all(nodes.map((n) => n.call('close').catch(() => undefined)));
    await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
    store.admin?.disconnect();
    await store.stop();
  }
  return out;
}

export async function runFleet(options) {
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const results = [];
  const run = () => ({ load, cores: cpus().length, options, results });
  sofar.run = run;
  for (const kind of options.stores) {
    const startLoad = (loadavg()[0] ?? 0).toFixed(2);
    const result = await runStore(kind, options);
    results.push({ ...result, loadAtStart: startLoad, loadAtEnd: (loadavg()[0] ?? 0).toFixed(2) });
    sofar.current = undefined;
    // Each store's figures as soon as they are in: a later store that stalls loses none of them.
    progress(`${kind} done:\n${tables({ ...run(), results: results.slice(-1) })}`);
  }
  return { load, cores: cpus().length, options, results };
}

const ms = (x) => fmt.ms(x);
/** The tables of a run, one row per figure. */
function tables(run) {
  const rows = [];
  for (const r of run.results) {
    const s = r.store;
    rows.push([
      s,
      `holders (field)`,
      `${fmt.int(r.live)} live of ${fmt.int(r.holders)} (${r.bits}-bit field of ${fmt.int(r.field)}); load ${r.loadAtStart} -> ${r.loadAtEnd}`,
    ]);
    const c = run.options.claimConcurrency;
    rows.push([
      s,
      'fill the field',
      `${fmt.s(r.fillSeconds)} s (connects ${CHILDREN} processes x ${CONCURRENCY} in flight, then claims ${c} in flight)`,
    ]);
    const pair = (x) => `p50 ${ms(x.p50)} ms, p99 ${ms(x.p99)} ms`;
    for (const f of r.fill) {
      const connected = s === 'zookeeper' ? ' (its session opened inside)' : ', client connected before';
      rows.push([
        s,
        `claim up to ${Math.round(f.upTo * 100)}% full, ${c} in flight${connected}`,
        `${pair(f)}, max ${ms(f.max)} ms (${f.n} claims${f.failed ? `, ${f.failed} failed` : ''}, ${fmt.int(f.claimsPerSecond)}/s, ${f.requestsPerClaim.toFixed(1)} store requests each beside ${fmt.int(f.backgroundPerSecond)}/s of keepalives)`,
      ]);
      if (s !== 'zookeeper') {
        rows.push([
          s,
          `  connect + claim (connect ${CHILDREN} x ${CONCURRENCY} in flight)`,
          `${pair(f.connectPlusClaim)} (the connect alone: ${pair(f.connect)})`,
        ]);
        rows.push([
          s,
          `  bare round trips, ${c} in flight`,
          `read ${pair(f.read)}; write ${pair(f.write)} (${f.write.n} each)`,
        ]);
      }
    }
    if (r.overfull)
      rows.push([s, 'claim past a full field', `${r.overfull.name} in ${ms(r.overfull.ms)} ms`]);
    for (const [label, m] of [
      ['idle (keepalives only)', r.idle],
      ['issuing (1 ID/s per holder)', r.issuing],
    ]) {
      rows.push([
        s,
        `steady state, ${label}`,
        `${fmt.int(m.opsPerSecond)} store requests/s (${(m.opsPerSecond / r.live).toFixed(3)} per holder); server CPU ${(m.serverCpu * 100).toFixed(0)}% of a core, RSS ${fmt.int(m.serverRssMb)} MiB; holders per 1,000: CPU ${(m.fleetCpuPer1000 * 100).toFixed(1)}% of a core, RSS ${fmt.int(m.fleetRssMbPer1000)} MiB above the ${CHILDREN} bare processes' ${fmt.int(r.fleetBaseRssMb)} MiB`,
      ]);
      rows.push([
        s,
        `  the machine, ${label}`,
        `all holders ${(m.fleetCpu * 100).toFixed(0)}% of a core, ${fmt.int(m.fleetRssMb)} MiB; every process ${(m.machineBusy * 100).toFixed(0)}% of ${run.cores} cores busy; ${fmt.int(m.memAvailableMb)} MiB available`,
      ]);
    }
    // The capacity model (README, "Fleet capacity"): a holder sends a keepalive every
    // (TTL - TTL/5) / 3, so 3.75 / TTL a second, one request each.
    const model = 3.75 / run.options.ttlSeconds;
    const measured = r.idle.opsPerSecond / r.live;
    rows.push([
      s,
      'model: keepalive requests per holder per second',
      `3.75 / TTL = ${model.toFixed(3)}; measured idle ${measured.toFixed(3)} (${(((measured - model) / model) * 100).toFixed(1)}%)`,
    ]);
    for (const x of r.restart) {
      const bound =
        x.how === 'graceful'
          ? 'no attempt refused (the ID released before the stop)'
          : `no attempt refused past ${fmt.s(x.latestRefusalAllowedMs / 1000)} s after the kill (TTL + the store's expiry slack)`;
      rows.push([
        s,
        `restart: ${fmt.int(x.replaced)} holders ${x.how}, replaced by one pod each, ${run.options.restartConcurrency} starting at a time`,
        `${x.reclaimed} reclaimed${x.failed ? `, ${x.failed} failed` : ''}; stop to first ID: p50 ${ms(x.p50)} ms, max ${ms(x.max)} ms`,
      ]);
      rows.push([
        s,
        "  of it: queue for a start (the simulator's)",
        `p50 ${ms(x.queue.p50)} ms, max ${ms(x.queue.max)} ms; a pod's own wait (start to first ID) p50 ${ms(x.podWait.p50)} ms, p99 ${ms(x.podWait.p99)} ms, max ${ms(x.podWait.max)} ms`,
      ]);
      rows.push([
        s,
        `  of it: connect${s === 'zookeeper' ? ' (none apart: the session opens in the claim)' : ''}, refused attempts, the claim`,
        `connect ${pair(x.connect)}; refused ${x.refusedAttempts} attempts, for p50 ${ms(x.refusedFor.p50)} ms, max ${ms(x.refusedFor.max)} ms${x.lastRefusalAfterStopMs === undefined ? '' : ` (the last begun ${fmt.s(x.lastRefusalAfterStopMs / 1000)} s after the stop)`}; claim ${pair(x.claim)}, max ${ms(x.claim.max)} ms`,
      ]);
      rows.push([s, '  bound', `${bound}: ${x.violations} of ${x.reclaimed} pods past it`]);
    }
    rows.push([
      s,
      'IDs issued, checked',
      `${fmt.int(r.issuedIds)} distinct; ${r.duplicateIds} duplicate IDs; ${r.machineIdsHeldTwice} machine IDs reported held twice; ${r.lateErrors} holder errors after the claim${r.firstLateError ? ` (first: ${r.firstLateError})` : ''}`,
    ]);
    if (r.zkCapacity) {
      for (const [label, perSecond] of Object.entries(r.zkCapacity))
        rows.push([
          s,
          `server capacity: ${label}, 8 sessions x 8 in flight`,
          `${fmt.int(perSecond)} requests/s`,
        ]);
    }
    if (r.errors.length > 0) rows.push([s, 'first errors', r.errors.slice(0, 3).join(' | ')]);
  }
  return formatTable(['store', 'measure', 'result'], rows);
}

export async function benchFleet() {
  const options = fleetArgs(process.argv.slice(2));
  const run = await runFleet(options);
  return {
    title: `Fleet simulator: ${fmt.int(options.holders)} holders per store, TTL ${options.ttlSeconds} s, windows of ${options.windowSeconds} s (load average ${run.load} on ${run.cores} cores at the start)`,
    table: tables(run),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // A big run that stalls (a store saturated) still reports what it measured: the store being
  // run goes out marked interrupted, then the exit hooks stop the servers.
  process.once('SIGINT', () => {
    const run = sofar.run?.() ?? { results: [] };
    const current = sofar.current ? [sofar.current] : [];
    const results = [...run.results, ...current.map((r) => ({ ...r, interrupted: true }))];
    console.log(JSON.stringify({ ...run, interrupted: true, results }));
    process.exit(130);
  });
  const run = await runFleet(fleetArgs(process.argv.slice(2)));
  if (process.argv.includes('--json')) console.log(JSON.stringify(run));
  else console.log(tables(run));
}
