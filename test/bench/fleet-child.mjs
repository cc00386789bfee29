// One "node" of the fleet simulator (fleet.mjs): a process holding many machine IDs the way a
// user's processes do, each through its own provider call (its own client, lease and, on
// ZooKeeper, its own session) behind its own Sonyflake generator. Driven over IPC by fleet.mjs;
// every ID it issues goes back to the parent, which checks the whole fleet for duplicates.
//
// On etcd and Redis each holder's client is connected before its claim, as a pod connects when
// it starts: the claim is then timed from the provider call to the first ID, and the connect
// apart (their sum is "connect + claim"). On ZooKeeper the provider opens its own session inside
// the claim (it takes no client), so there the claim includes it.
import { etcdMachineId } from '@ids/machine-etcd';
import { redisMachineId } from '@ids/machine-redis';
import { zookeeperMachineId } from '@ids/machine-zookeeper';
import { Sonyflake } from '@ids/sonyflake';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';

/** @type {{ store: string, target: string, prefix: string, bits: number, ttlSeconds: number }} */
const config = JSON.parse(process.argv[2] ?? '{}');
const TIMEOUT_MS = 30_000;
const base = { ttlSeconds: config.ttlSeconds, timeoutMs: TIMEOUT_MS };

/**
 * A client of the holder's own, connected, with the settings the providers give a client of
 * their own (fencing rests on Redis's: no offline queue, no retried request), so that handing
 * it over changes when the connect happens and nothing else.
 * @returns {Promise<{ client: any, connectMs: number, close: () => void }>}
 */
async function connectOne() {
  const t0 = performance.now();
  if (config.store === 'redis') {
    const client = new Redis(config.target, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: TIMEOUT_MS,
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    client.on('error', () => undefined); // the provider reports what matters through the claim
    await client.connect();
    return { client, connectMs: performance.now() - t0, close: () => client.disconnect() };
  }
  if (config.store === 'etcd') {
    const client = new Etcd3({
      hosts: [config.target],
      dialTimeout: TIMEOUT_MS,
      grpcOptions: { 'grpc.keepalive_time_ms': 6000, 'grpc.keepalive_timeout_ms': 6000 },
    });
    // gRPC dials on the first call: one read opens the channel.
    await client.get(`${config.prefix}/connect`).string();
    return { client, connectMs: performance.now() - t0, close: () => client.close() };
  }
  return { client: undefined, connectMs: 0, close: () => undefined };
}

/** @param {any} client */
function providerFor(client) {
  if (config.store === 'etcd') return etcdMachineId({ ...base, client, prefix: config.prefix });
  if (config.store === 'redis') return redisMachineId({ ...base, client, prefix: config.prefix });
  return zookeeperMachineId({ ...base, connect: config.target, path: config.prefix });
}

/** Clients connected ahead of their holders' claims (`connect`), taken by the next claims. */
/** @type {Awaited<ReturnType<typeof connectOne>>[]} */
const connected = [];

/** @type {{ generator: Sonyflake, machineId: number, close: () => void }[]} */
const holders = [];
/** Errors past the claim (a lost lease, a failed keepalive), counted, first one kept. */
let lateErrors = 0;
let firstLateError = '';

const fullError = (error) => {
  const cause = error?.cause ?? error;
  return cause?.name === 'LeaseSpaceFullError';
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One holder, as one pod: its client (connected ahead by `connect`, or here when none is
 * waiting, as a pod connects when it starts), then the generator claims through the provider
 * and issues its first ID. `retryFullMs` keeps retrying a full field that long, `retryPauseMs`
 * apart (a replacement waiting for a killed holder's lease to expire). Times returned, each on
 * the wall clock (the parent compares them with its own stop times) or as a duration:
 * `startedAt` the pod's start, `connectMs` its connect (ahead, by `connect`, when
 * `connectedAhead`; else at the start), `refused` the
 * start and end of each attempt refused with LeaseSpaceFullError, `claimAt` the start of the
 * attempt that held, `ms` that attempt alone (provider call to first ID), `at` the first ID.
 */
async function claimOne(retryFullMs, retryPauseMs = 200) {
  const startedAt = Date.now();
  const ahead = connected.pop();
  const conn = ahead ?? (await connectOne());
  const provider = providerFor(conn.client);
  const deadline = performance.now() + retryFullMs;
  /** @type {[number, number][]} */
  const refused = [];
  for (;;) {
    const claimAt = Date.now();
    const t0 = performance.now();
    try {
      const generator = await Sonyflake.create({
        machineId: provider,
        bitsMachineId: config.bits,
        onError: (error) => {
          lateErrors++;
          firstLateError ||= String(/** @type {any} */ (error)?.message ?? error);
        },
      });
      const id = await generator.nextId();
      const ms = performance.now() - t0;
      const machineId = generator.machineId(id);
      holders.push({ generator, machineId, close: conn.close });
      return {
        machineId,
        ms,
        connectMs: conn.connectMs,
        id: String(id),
        at: Date.now(),
        startedAt,
        claimAt,
        refused,
        connectedAhead: ahead !== undefined,
      };
    } catch (error) {
      if (fullError(error) && performance.now() < deadline) {
        refused.push([claimAt, Date.now()]);
        await sleep(retryPauseMs);
        continue;
      }
      conn.close();
      throw error;
    }
  }
}

/** A client of this process's own for `roundTrip`, opened on first use. */
let probe;

/** `count` runs of `fn`, `concurrency` at a time. */
async function pool(count, concurrency, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        next++;
        await fn();
      }
    }),
  );
}

const handlers = {
  /** Connects `count` clients, `concurrency` at a time, for the next claims; their connect times. */
  async connect({ count, concurrency }) {
    const ms = [];
    await pool(count, concurrency, async () => {
      const conn = await connectOne();
      connected.push(conn);
      ms.push(conn.connectMs);
    });
    return { ms };
  },
  /**
   * The floor under a claim: `count` bare round trips on a connected client, each timed, a read
   * (Redis PING, etcd a one-key read) and a write (Redis SET, etcd a put: through raft and its
   * log's fsync, as a claim's lease grant and transactions are). ZooKeeper: none (its provider
   * takes no client).
   */
  async roundTrip({ count }) {
    if (config.store === 'zookeeper') return { read: [], write: [] };
    probe ??= await connectOne();
    const read = [];
    const write = [];
    const key = `${config.prefix}/round-trip/${process.pid}`;
    for (let i = 0; i < count; i++) {
      let t0 = performance.now();
      if (config.store === 'redis') await probe.client.ping();
      else await probe.client.get(key).string();
      read.push(performance.now() - t0);
      t0 = performance.now();
      if (config.store === 'redis') await probe.client.set(key, String(i));
      else await probe.client.put(key).value(String(i));
      write.push(performance.now() - t0);
    }
    return { read, write };
  },
  /** `count` claims, `concurrency` at a time; each claim's time, ID and first issued ID. */
  async claim({ count, concurrency, retryFullMs = 0, retryPauseMs = 200 }) {
    const receivedAt = Date.now();
    const claims = [];
    const errors = [];
    await pool(count, concurrency, async () => {
      try {
        claims.push(await claimOne(retryFullMs, retryPauseMs));
      } catch (/** @type {any} */ error) {
        errors.push(`${error?.name}: ${error?.cause?.message ?? error?.message}`);
      }
    });
    return { claims, errors, receivedAt };
  },
  /** One more claim on a field the parent knows is full: how it fails, and how fast. */
  async overfull() {
    const t0 = performance.now();
    try {
      await claimOne(0);
      return { name: 'none (claimed!)', ms: performance.now() - t0 };
    } catch (/** @type {any} */ error) {
      return {
        name: error?.cause?.name ?? error?.name,
        message: error?.cause?.message,
        ms: performance.now() - t0,
      };
    }
  },
  /** Every holder issues one ID now (they all keep issuing while the fleet churns). */
  async issue() {
    const ids = [];
    let failed = 0;
    for (const holder of holders) {
      try {
        ids.push(String(holder.generator.nextIdSync()));
      } catch {
        failed++;
      }
    }
    return { ids, failed, lateErrors, firstLateError };
  },
  /** Graceful stop: every generator closes (records its time, releases its lease). */
  async close() {
    const released = holders.map((h) => h.machineId);
    await Promise.all(
      holders.splice(0).map(async (h) => {
        await h.generator.close().catch(() => undefined);
        h.close(); // the holder's own client: the provider closes only clients it made
      }),
    );
    for (const conn of connected.splice(0)) conn.close();
    probe?.close();
    probe = undefined;
    return { released, at: Date.now() };
  },
};

/** @type {Record<string, (args: any) => Promise<unknown>>} */
const commands = handlers;
const send = (/** @type {object} */ message) => process.send?.(message);
process.on('message', async (/** @type {any} */ message) => {
  const { seq, cmd, args } = message;
  try {
    send({ seq, ok: true, value: await commands[cmd]?.(args ?? {}) });
  } catch (/** @type {any} */ error) {
    send({ seq, ok: false, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
send({ ready: true });
