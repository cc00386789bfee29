// One "node" of the fleet simulator (fleet.mjs): a process holding many machine IDs the way a
// user's processes do, each through its own provider call (its own client, lease and, on
// ZooKeeper, its own session) behind its own Sonyflake generator. Driven over IPC by fleet.mjs;
// every ID it issues goes back to the parent, which checks the whole fleet for duplicates.
import { etcdMachineId } from '@ids/machine-etcd';
import { redisMachineId } from '@ids/machine-redis';
import { zookeeperMachineId } from '@ids/machine-zookeeper';
import { Sonyflake } from '@ids/sonyflake';

/** @type {{ store: string, target: string, prefix: string, bits: number, ttlSeconds: number }} */
const config = JSON.parse(process.argv[2] ?? '{}');
const base = { ttlSeconds: config.ttlSeconds, timeoutMs: 30_000 };
const provider =
  config.store === 'etcd'
    ? etcdMachineId({ ...base, endpoints: [config.target], prefix: config.prefix })
    : config.store === 'redis'
      ? redisMachineId({ ...base, url: config.target, prefix: config.prefix })
      : zookeeperMachineId({ ...base, connect: config.target, path: config.prefix });

/** @type {{ generator: Sonyflake, machineId: number }[]} */
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
 * One holder: the generator claims through the provider, then issues its first ID. `retryFullMs`
 * keeps retrying a full field that long (a replacement waiting for a killed holder's lease).
 */
async function claimOne(retryFullMs) {
  const t0 = performance.now();
  const deadline = t0 + retryFullMs;
  for (;;) {
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
      const machineId = generator.machineId(id);
      holders.push({ generator, machineId });
      return { machineId, ms: performance.now() - t0, id: String(id), at: Date.now() };
    } catch (error) {
      if (fullError(error) && performance.now() < deadline) {
        await sleep(200);
        continue;
      }
      throw error;
    }
  }
}

const handlers = {
  /** `count` claims, `concurrency` at a time; each claim's time, ID and first issued ID. */
  async claim({ count, concurrency, retryFullMs = 0 }) {
    const claims = [];
    const errors = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count) }, async () => {
        while (next < count) {
          next++;
          try {
            claims.push(await claimOne(retryFullMs));
          } catch (/** @type {any} */ error) {
            errors.push(`${error?.name}: ${error?.cause?.message ?? error?.message}`);
          }
        }
      }),
    );
    return { claims, errors };
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
    await Promise.all(holders.splice(0).map((h) => h.generator.close().catch(() => undefined)));
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
