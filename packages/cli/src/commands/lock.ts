import { spawn } from 'node:child_process';
import { importOptional, type StoreName, storeFor, storeForms } from '@ids/engine/internal';
import { parseCount } from '../args.js';
import { type Command, defineCommand, type Flags } from '../command.js';
import { UsageError } from '../errors.js';

type Locks = import('@ids/lock').Locks;

// @ids/lock (with its Redis, etcd or ZooKeeper store package) is an optional peer of the CLI: only this command uses it.
const loadLock = <T>(load: () => Promise<T>) => importOptional('@ids/lock', load, '`ids lock`');

/**
 * How the locks open on each lock store of the engine's store table, from its string. Each opens
 * within its timeoutMs (3 s): a store that is not listening is ERR_IDS_STORE_UNAVAILABLE
 * then, on one line naming the store, not a wait.
 */
const OPENERS: Record<StoreName<'lock'>, (store: string) => Promise<Locks>> = {
  redis: async (store) => (await loadLock(() => import('@ids/lock/redis'))).redisLocks({ url: store }),
  etcd: async (store) =>
    (await loadLock(() => import('@ids/lock/etcd'))).etcdLocks({ endpoints: store.split(',') }),
  // zookeeperLocks takes ZooKeeper's own connect string, host:port[,host:port...][/chroot].
  zookeeper: async (store) =>
    (await loadLock(() => import('@ids/lock/zookeeper'))).zookeeperLocks({
      connect: store.slice('zookeeper://'.length),
    }),
};

/** Opens the locks on the store `--store` names. */
function openLocks(store: string): Promise<Locks> {
  const entry = storeFor(store, 'lock');
  if (!entry) {
    throw new UsageError(`--store: expected ${storeForms('lock')}, received ${JSON.stringify(store)}`);
  }
  return OPENERS[entry.name](store);
}

/** `ids lock`: holds a named lock while a command runs, like flock(1), with the fence in its environment. */
const FLAGS = {
  store: {
    type: 'string',
    value: 'WHERE',
    help: 'redis://... or rediss://... (Redis), http://host:port[,...] (etcd), or zookeeper://host:port[,...][/chroot] (ZooKeeper); a store that does not answer within 3 s: exit 1, ERR_IDS_STORE_UNAVAILABLE',
    env: 'IDS_LOCK_STORE',
    byDefault: 'redis://127.0.0.1:6379',
  },
  ttl: { type: 'string', value: 'MS', help: "the lock's lease in ms, 100 to 2147483647", byDefault: '10000' },
  wait: {
    type: 'string',
    value: 'MS',
    help: 'give up after MS ms of waiting, exit 1',
    byDefault: 'none: wait as long as it takes',
  },
  nonblock: { type: 'boolean', short: 'n', help: 'do not wait: exit 1 at once if the lock is held' },
} as const satisfies Flags;

export const lock: Command = defineCommand({
  name: 'lock',
  summary: 'run a command holding a named lock (Redis, etcd, ZooKeeper); fence: IDS_LOCK_FENCE',
  flags: FLAGS,
  usage: `Usage: ids lock [options] NAME -- COMMAND [ARGS...]

Waits for the lock NAME (first come, first served), runs COMMAND with IDS_LOCK_NAME and
IDS_LOCK_FENCE in its environment, and releases the lock when it exits; the exit code is the
command's. The fence is higher than that of every earlier holder of NAME: pass it to the
resource the command writes, so that a late write of an earlier holder is refused. Should the
lock stop being trusted while the command runs (the store unreachable for most of a TTL), the
command gets SIGTERM and ids lock exits 1.`,
  positionals: true,
  async run({ values, positionals }, io) {
    const [name, command, ...commandArgs] = positionals;
    if (name === undefined || command === undefined) {
      throw new UsageError('expected a lock name and a command: ids lock NAME -- COMMAND [ARGS...]');
    }
    const ttlMs = values.ttl === undefined ? undefined : parseCount(values.ttl, '--ttl', 100, 2 ** 31 - 1);
    const waitMs = values.nonblock
      ? 0
      : values.wait === undefined
        ? undefined
        : parseCount(values.wait, '--wait', 0, 2 ** 31 - 1);
    const locks = await openLocks(values.store ?? io.env.IDS_LOCK_STORE ?? 'redis://127.0.0.1:6379');
    try {
      const held = await locks.acquire(name, {
        ...(ttlMs === undefined ? {} : { ttlMs }),
        ...(waitMs === undefined ? {} : { waitMs }),
      });
      try {
        const child = spawn(command, commandArgs, {
          stdio: 'inherit',
          env: { ...io.env, IDS_LOCK_NAME: name, IDS_LOCK_FENCE: held.fence.toString() },
        });
        const onLost = () => {
          io.stderr.write(
            `ids lock: the lock ${JSON.stringify(name)} is no longer trusted (${String(held.signal.reason?.message)}); stopping the command\n`,
          );
          child.kill('SIGTERM');
        };
        held.signal.addEventListener('abort', onLost, { once: true });
        const code = await new Promise<number>((resolve, reject) => {
          child.once('error', reject);
          child.once('exit', (exitCode, signal) =>
            resolve(exitCode ?? 128 + (signal === 'SIGTERM' ? 15 : 9)),
          );
        });
        held.signal.removeEventListener('abort', onLost);
        const lost = held.signal.aborted;
        await held.release();
        return lost ? 1 : code;
      } finally {
        await held.release().catch(() => undefined);
      }
    } finally {
      await locks.close();
    }
  },
});
