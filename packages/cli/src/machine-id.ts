// The one place the `ids` command decides its machine ID: @ids/machine-file's auto chain (the
// provider the library and the server run too), with the --machine-id flag as its first step
// and a Redis or a ZooKeeper as a store when one is configured. The trail is the chain's own, shown as is by
// `ids machine-id --explain`.
import { InvalidArgumentError, InvalidMachineIdError, type NamedMachineIdProvider } from '@ids/engine';
import { importOptional } from '@ids/engine/internal';
import {
  type AutoMachineId,
  AutoMachineIdError,
  type AutoMachineIdOptions,
  autoMachineId,
  autoSteps,
  explicitStep,
} from '@ids/machine-file';
import { UsageError } from './errors.js';

/**
 * The Redis step of @ids/machine-redis, passed to the chain as a store only when IDS_REDIS_URL is
 * set, and loaded only when it runs: the Redis client costs tens of ms to load, and most runs of
 * the command have no Redis.
 */
function redisStore(env: Readonly<Record<string, string | undefined>>): NamedMachineIdProvider {
  return {
    name: 'redis',
    title: 'Redis claim',
    async provider(context) {
      const { redisAutoStep } = await importOptional(
        '@ids/machine-redis',
        () => import('@ids/machine-redis'),
        'a Redis machine ID (IDS_REDIS_URL)',
      );
      return redisAutoStep({ env }).provider(context);
    },
  };
}

/**
 * The ZooKeeper step of @ids/machine-zookeeper, passed to the chain as a store only when
 * `--zookeeper` or IDS_ZOOKEEPER_CONNECT is given, and loaded only then, as Redis's is. A
 * connect string typed as `--zookeeper` is checked before the chain runs: a mistake in it is a
 * usage error, not a failed claim.
 */
async function zookeeperStore(
  connect: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<NamedMachineIdProvider> {
  const { zookeeperAutoStep } = await importOptional(
    '@ids/machine-zookeeper',
    () => import('@ids/machine-zookeeper'),
    'a ZooKeeper machine ID (--zookeeper, IDS_ZOOKEEPER_CONNECT)',
  );
  try {
    return zookeeperAutoStep({ env, ...(connect !== undefined ? { connect } : {}) });
  } catch (error) {
    if (error instanceof InvalidArgumentError && error.option === 'connect') {
      throw new UsageError(`--zookeeper: ${error.message.replace(/^connect: /, '')}`);
    }
    throw error;
  }
}

/** What `chooseMachineId` works from: the layout's width, and the user's flag and environment. */
export interface MachineIdOptions {
  /** Bits of the layout's machine field: an ID must be below 2^bits. */
  readonly bits: number;
  /** The `--machine-id` value as typed, if given. */
  readonly flag?: string | undefined;
  /** The `--zookeeper` value as typed (`host:port[,host:port...][/chroot]`), if given. */
  readonly zookeeper?: string | undefined;
  /** Where IDS_* variables, HOSTNAME and KUBERNETES_SERVICE_HOST are read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The interface list for the address steps. Default: os.networkInterfaces. */
  readonly interfaces?: AutoMachineIdOptions['interfaces'];
}

/**
 * Chooses the machine ID: `--machine-id`, then the auto chain (IDS_MACHINE_ID, a StatefulSet
 * ordinal in Kubernetes, EC2 metadata and a unique-local IPv6 address when opted in with
 * IDS_AUTO_OPT_IN, the private IPv4 rule, a host claim in IDS_CLAIM_DIR), with a Redis
 * (IDS_REDIS_URL) or a ZooKeeper (`--zookeeper`, IDS_ZOOKEEPER_CONNECT) claim after the explicit
 * ID when one is configured. IDs derived from the
 * host are held as a host claim, released by the generator's close (or `release()`).
 *
 * @throws InvalidMachineIdError or InvalidArgumentError for a value the user typed
 * (--machine-id, IDS_MACHINE_ID, IDS_ORDINAL_OFFSET, IDS_AUTO_OPT_IN...): a usage error.
 * AutoMachineIdError when no step gave an ID, with the trail and how to give one.
 */
export async function chooseMachineId(options: MachineIdOptions): Promise<AutoMachineId> {
  const { bits, flag } = options;
  const env = options.env ?? process.env;
  // The chain gains a store's step only where that store is configured: elsewhere the trail
  // stays what it was.
  const stores = env.IDS_REDIS_URL?.trim() ? [redisStore(env)] : [];
  if (options.zookeeper !== undefined || env.IDS_ZOOKEEPER_CONNECT?.trim()) {
    stores.push(await zookeeperStore(options.zookeeper, env));
  }
  const chain: AutoMachineIdOptions = {
    env,
    ...(options.interfaces && { interfaces: options.interfaces }),
    // A run of `ids` only issues IDs and writes them: the generator's verify() renews a host
    // claim before an ID once its record is near, so a renewal thread (whose start costs more
    // CPU than `ids generate` itself, test/bench/cli.mjs) would guard against nothing here.
    claim: { renewalThread: false },
    stores,
  };
  let chosen: AutoMachineId | undefined;
  try {
    await autoMachineId({
      ...chain,
      steps: [explicitStep({ name: '--machine-id', value: flag }), ...autoSteps(chain)],
      onChosen: (auto) => {
        chosen = auto;
      },
    })({ bits });
    return chosen as AutoMachineId;
  } catch (error) {
    if (!(error instanceof AutoMachineIdError)) throw error;
    // A value the user typed is a mistake in the command line (exit 2), not a failure while running.
    if (error.cause instanceof InvalidMachineIdError || error.cause instanceof InvalidArgumentError)
      throw error.cause;
    throw new AutoMachineIdError(
      `${error.message}\nGive one with --machine-id N or IDS_MACHINE_ID=N (0 to ${2 ** bits - 1} for this layout), or a writable claim directory with IDS_CLAIM_DIR`,
      error.trail,
      { cause: error.cause },
    );
  }
}
