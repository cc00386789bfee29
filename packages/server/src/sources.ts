// Where the server's machine IDs come from: @ids/machine-file's `auto` chain, the one the library
// and the CLI run, with the same steps for the same variables (a store's step is in it where
// IDS_REDIS_URL, IDS_ETCD_ENDPOINTS or IDS_ZOOKEEPER_CONNECT says where the store is).
// `--machine-id-source` names the whole chain (`auto`) or one of its steps: the chain restricted
// to that step. A caller with a source of its own passes a provider instead of a name. The pool
// calls a generator's provider at start, and again for a generator whose claim was fenced and
// that cannot renew by itself.
import {
  InvalidMachineIdError,
  type Layout,
  type MachineIdProvider,
  type NamedMachineIdProvider,
} from '@ids/engine';
import { envMachineIds, releaseQuietly } from '@ids/engine/internal';
import {
  type AutoMachineIdOptions,
  autoMachineId,
  autoSteps,
  autoStepTable,
  type Env,
  explicitStep,
} from '@ids/machine-file';
import type { InterfaceSource } from '@ids/machine-ip';
import { ServerConfigError } from './errors.js';

/** What the sources are built from: the server's options. */
export interface MachineIdSourceSettings {
  /** The layout of the generators (its `machineBits` bound the IDs). */
  readonly layout: Layout;
  /** How many generators the pool runs (`--machines`). */
  readonly count: number;
  /** The environment the server was configured from (IDS_CLAIM_DIR, the stores' variables). */
  readonly env: Env;
  /** The explicit machine IDs (`--machine-id 1,2,3`), when given. */
  readonly machineIds: readonly number[] | undefined;
  /** The host-claim directory (`--claim-dir`), when given; else IDS_CLAIM_DIR or the default. */
  readonly claimDir: string | undefined;
  /** etcd endpoints (`--etcd`), when given; else IDS_ETCD_ENDPOINTS. */
  readonly etcdEndpoints: readonly string[] | undefined;
  /** The Redis of machine IDs (`--machine-id-redis`), when given; else IDS_MACHINE_ID_REDIS_URL. */
  readonly machineIdRedisUrl?: string | undefined;
  /** The server's Redis (`--redis`), when given; else IDS_REDIS_URL. */
  readonly redisUrl?: string | undefined;
  /** The ZooKeeper (`--zookeeper`), when given; else IDS_ZOOKEEPER_CONNECT. */
  readonly zookeeperConnect?: string | undefined;
  /** The TTL in seconds of the stores' claims, when given (else their default, 10). */
  readonly leaseTtlSeconds?: number | undefined;
  /** The interface list for the private-IPv4 step (tests inject one). Default: the host's. */
  readonly interfaces: InterfaceSource | undefined;
}

/**
 * The explicit IDs, checked against the pool: the option, else IDS_MACHINE_ID of the environment
 * (a comma-separated list, one per generator); undefined when neither is given.
 */
function explicitIds(settings: MachineIdSourceSettings): readonly number[] | undefined {
  const { count, layout } = settings;
  const ids = settings.machineIds;
  if (!ids) return envMachineIds(settings.env, { max: layout.maxMachine, count });
  if (ids.length !== count) {
    throw new ServerConfigError(
      `machine-id: expected ${count} machine ID${count === 1 ? '' : 's'} (one per --machines), received ${ids.length}`,
    );
  }
  const wide = ids.find((id) => id > layout.maxMachine);
  if (wide !== undefined) {
    throw new ServerConfigError(
      `machine-id: expected integers from 0 to ${layout.maxMachine} for the ${layout.name} layout, received ${wide}`,
    );
  }
  return ids;
}

const onePerHost = (count: number) =>
  new ServerConfigError(
    `machines: the private IPv4 address gives one machine ID, and ${count} were asked for; use --machine-id-source host-claim or a store, or --machine-id with ${count} IDs`,
  );

/**
 * The chain's options from the server's. The server's flags for the stores are their variables
 * spelled as flags (`--etcd` is IDS_ETCD_ENDPOINTS): given, they are set in the chain's
 * environment under those variables, so the store table alone decides which store a variable
 * configures, as it does for the library and the CLI.
 */
function chainOptions(settings: MachineIdSourceSettings): AutoMachineIdOptions {
  const flags: Record<string, string | undefined> = {
    IDS_ETCD_ENDPOINTS: settings.etcdEndpoints?.join(','),
    IDS_MACHINE_ID_REDIS_URL: settings.machineIdRedisUrl,
    IDS_REDIS_URL: settings.redisUrl,
    IDS_ZOOKEEPER_CONNECT: settings.zookeeperConnect,
  };
  return {
    env: {
      ...settings.env,
      ...Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined)),
    },
    ...(settings.interfaces && { interfaces: settings.interfaces }),
    ...(settings.claimDir && { claim: { dir: settings.claimDir } }),
    ...(settings.leaseTtlSeconds !== undefined && { ttlSeconds: settings.leaseTtlSeconds }),
    // Several generators share one lease (one connection, one keepalive, on ZooKeeper one
    // session), fenced together; one generator alone has its own.
    ...(settings.count > 1 && { shareLease: true }),
    // From here, so the store packages resolve as this package's optional peers.
    importPackage: (name) => import(name),
  };
}

/** The chain's steps for a source: all of them (`auto`), or the one it names. */
function stepsOf(name: string, settings: MachineIdSourceSettings, options: AutoMachineIdOptions) {
  const steps = autoSteps(options);
  if (name === 'auto') return steps;
  if (name === 'private-ip' && settings.count > 1) throw onePerHost(settings.count);
  const step = steps.find((s) => s.name === name);
  if (step) return [step];
  // Only a store's step can be missing: its store is not configured.
  const row = autoStepTable().find((r) => r.name === name);
  throw new ServerConfigError(
    `machine-id-source ${name}: expected where the store is (${row?.env?.join(' or ')}), received none`,
  );
}

/** The sources `--machine-id-source` names, with a line each for `--help`, in a fixed order. */
export function machineIdSources(): readonly { readonly name: string; readonly summary: string }[] {
  return [
    {
      name: 'auto',
      summary:
        'the steps below in order, the stores only where configured (`ids machine-id --explain` shows it)',
    },
    ...autoStepTable().map((row) => ({
      name: row.name,
      summary:
        row.name === 'explicit'
          ? 'the IDs of --machine-id / IDS_MACHINE_ID (a comma-separated list, one per --machines)'
          : row.summary,
    })),
  ];
}

/**
 * The provider of each generator for a source: a name of `machineIdSources()`, or a provider of
 * the caller's own, called once per generator (and again for a re-claim).
 * @throws ServerConfigError for an unknown name, or settings the source cannot work with;
 * InvalidMachineIdError for an IDS_MACHINE_ID that is not one ID per generator.
 */
export function machineIdProviders(
  source: string | MachineIdProvider,
  settings: MachineIdSourceSettings,
): (index: number) => MachineIdProvider {
  if (typeof source === 'function') return () => source;
  machineIdSourceNamed(source);
  const explicit = source === 'auto' || source === 'explicit';
  const ids = explicit ? explicitIds(settings) : undefined;
  if (source === 'explicit' && !ids) {
    throw new InvalidMachineIdError(
      `machine-id: expected ${settings.count} machine ID${settings.count === 1 ? '' : 's'} (one per --machines), received none`,
    );
  }
  const options = chainOptions(settings);
  // Made once, so that a store's step (its connection, its shared lease) serves the whole pool.
  const steps: NamedMachineIdProvider[] = source === 'explicit' ? [] : stepsOf(source, settings, options);
  // The explicit IDs first, one per generator, as `ids machine-id` puts its flag first: with the
  // list given the chain stops there, so the chain's own `explicit` step never reads
  // IDS_MACHINE_ID as one ID. A source restricted to another step does not look at them.
  const first = (index: number) =>
    explicit ? [explicitStep({ name: '--machine-id', value: ids?.[index] })] : [];
  return (index) =>
    autoMachineId({
      ...options,
      steps: [...first(index), ...steps],
      // A step named as the source runs, opt-in or not.
      ...(source !== 'auto' && { optIn: steps.filter((s) => s.optIn).map((s) => s.name) }),
      onChosen: (auto) => {
        // The private IPv4 address is one ID per host: a second generator would find it held.
        if (auto.step === 'private-ip' && settings.count > 1) {
          void releaseQuietly(auto.machineId);
          throw onePerHost(settings.count);
        }
      },
    });
}

/** Checks a source's name. @throws ServerConfigError for an unknown name. */
export function machineIdSourceNamed(name: string): void {
  const names = machineIdSources().map((s) => s.name);
  if (!names.includes(name)) {
    throw new ServerConfigError(
      `machine-id-source: expected one of ${names.join(', ')}, received ${JSON.stringify(name)}`,
    );
  }
}

/** A comma-separated list, or undefined when empty. */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value.split(',').map((part) => part.trim());
}
