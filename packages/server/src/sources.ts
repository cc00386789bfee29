// Where the server's machine IDs come from: each name `--machine-id-source` takes maps to
// providers (the engine's one plug-in shape), one per generator of the pool. The pool calls a
// generator's provider at start, and again for a generator whose claim was fenced and that
// cannot renew by itself. `auto` is @ids/machine-file's chain, the one the library and the CLI
// run; a caller with a source of its own passes a provider instead of a name.
import type { Layout, MachineIdProvider } from '@ids/engine';
import { importOptional, releaseQuietly } from '@ids/engine/internal';
import { autoMachineId, autoSteps, type Env, explicitStep } from '@ids/machine-file';
import type { InterfaceSource } from '@ids/machine-ip';
import { ServerConfigError } from './errors.js';

/** What the sources are built from: the server's options. */
export interface MachineIdSourceSettings {
  /** The layout of the generators (its `machineBits` bound the IDs). */
  readonly layout: Layout;
  /** How many generators the pool runs (`--machines`). */
  readonly count: number;
  /** The environment the server was configured from (IDS_CLAIM_DIR, a source's own settings). */
  readonly env: Env;
  /** The explicit machine IDs (`--machine-id 1,2,3`), when given. */
  readonly machineIds: readonly number[] | undefined;
  /** The host-claim directory (`--claim-dir`), when given; else IDS_CLAIM_DIR or the default. */
  readonly claimDir: string | undefined;
  /** etcd endpoints (`--etcd`), for the etcd source. */
  readonly etcdEndpoints: readonly string[] | undefined;
  /** The Redis of the redis source (`--machine-id-redis`, else `--redis`), when given. */
  readonly redisUrl?: string | undefined;
  /** The ZooKeeper of the zookeeper source (`--zookeeper`), when given; else IDS_ZOOKEEPER_CONNECT. */
  readonly zookeeperConnect?: string | undefined;
  /** The TTL in seconds of the redis and zookeeper sources' claims, when given (else their default, 10). */
  readonly leaseTtlSeconds?: number | undefined;
  /** The interface list for the private-IPv4 step (tests inject one). Default: the host's. */
  readonly interfaces: InterfaceSource | undefined;
}

/** One named source: a line for `--help`, and the provider of each generator (by its index). */
interface MachineIdSourceEntry {
  readonly summary: string;
  /** @throws ServerConfigError for settings the source cannot work with. */
  providers(settings: MachineIdSourceSettings): (index: number) => MachineIdProvider;
}

/**
 * The explicit IDs, checked against the pool: the option, else IDS_MACHINE_ID of the environment
 * (a comma-separated list); undefined when neither is given.
 */
function explicitIds(settings: MachineIdSourceSettings): readonly number[] | undefined {
  const ids = settings.machineIds ?? machineIdList(settings.env.IDS_MACHINE_ID, 'IDS_MACHINE_ID');
  if (!ids) return undefined;
  const { count, layout } = settings;
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

/**
 * A comma-separated list of machine IDs (`0,1,7`), or undefined when `value` is empty.
 * @throws ServerConfigError naming `what` unless every entry is a whole number in digits.
 */
export function machineIdList(value: string | undefined, what: string): number[] | undefined {
  return splitList(value)?.map((part) => {
    if (!/^[0-9]{1,10}$/.test(part)) {
      throw new ServerConfigError(
        `${what}: expected machine IDs as whole numbers, comma-separated, received ${JSON.stringify(value)}`,
      );
    }
    return Number(part);
  });
}

/** The built-in steps of the `auto` chain, configured from the server's settings. */
function steps(settings: MachineIdSourceSettings) {
  return autoSteps({
    env: settings.env,
    ...(settings.interfaces && { interfaces: settings.interfaces }),
    ...(settings.claimDir && { claim: { dir: settings.claimDir } }),
  });
}

/** One step of the chain, by name, alone: the server's `private-ip` and `host-claim`. */
function step(name: string): MachineIdSourceEntry['providers'] {
  return (settings) => {
    const provider = steps(settings).find((s) => s.name === name)?.provider as MachineIdProvider;
    return () => provider;
  };
}

const onePerHost = (count: number) =>
  new ServerConfigError(
    `machines: the private IPv4 address gives one machine ID, and ${count} were asked for; use --machine-id-source host-claim or etcd, or --machine-id with ${count} IDs`,
  );

/**
 * The providers of a store's source: the store package is loaded at the first call only (the
 * server's cold start does not pay for its client), then one provider serves the pool. With
 * several generators it shares one lease (`shareLease`: one connection, one keepalive, on
 * ZooKeeper one session) among their claims, fenced together; one generator alone has its own.
 */
function loadedOnce(
  held: string,
  load: () => Promise<MachineIdProvider>,
): (index: number) => MachineIdProvider {
  let shared: Promise<MachineIdProvider> | undefined;
  return () => async (context) => {
    shared ??= load();
    const claim = await (await shared)(context);
    context.note?.(`machine ID ${typeof claim === 'number' ? claim : claim.machineId} ${held}`);
    return claim;
  };
}

/**
 * What every leased source is given: the claim TTL (`--machine-id-ttl`) when given, else each
 * store's default; and, for a pool of several generators, one lease shared by their claims.
 */
const leaseOf = (settings: MachineIdSourceSettings) => ({
  ...(settings.leaseTtlSeconds !== undefined ? { ttlSeconds: settings.leaseTtlSeconds } : {}),
  ...(settings.count > 1 ? { shareLease: true } : {}),
});

const SOURCES: Readonly<Record<string, MachineIdSourceEntry>> = Object.freeze({
  auto: {
    summary: 'the auto chain of @ids/machine-file, explicit IDs first (`ids machine-id --explain` shows it)',
    providers(settings) {
      const ids = explicitIds(settings);
      // As `ids machine-id` does: the flag first (here a list, IDS_MACHINE_ID its variable, one
      // ID per generator), then the chain. With the list given the chain stops at the flag, so
      // its own `explicit` step never reads IDS_MACHINE_ID as one ID.
      return (index) =>
        autoMachineId({
          steps: [explicitStep({ name: '--machine-id', value: ids?.[index] }), ...steps(settings)],
          env: settings.env,
          onChosen: (auto) => {
            // The private IPv4 address is one ID per host: a second generator would find it held.
            if (auto.step === 'private-ip' && settings.count > 1) {
              void releaseQuietly(auto.machineId);
              throw onePerHost(settings.count);
            }
          },
        });
    },
  },
  explicit: {
    summary: 'the IDs of --machine-id / IDS_MACHINE_ID (a comma-separated list, one per --machines)',
    providers(settings) {
      const ids = explicitIds(settings);
      if (!ids) {
        throw new ServerConfigError(
          `machine-id: expected ${settings.count} machine ID${settings.count === 1 ? '' : 's'} (one per --machines), received none`,
        );
      }
      return (index) =>
        ({ note }) => {
          note?.(`machine ID ${ids[index]} given explicitly`);
          return ids[index] as number;
        };
    },
  },
  'private-ip': {
    summary:
      "Go's rule: the low bits of the host's private IPv4 address, held as a host claim (one machine only)",
    providers(settings) {
      if (settings.count > 1) throw onePerHost(settings.count);
      return step('private-ip')(settings);
    },
  },
  'host-claim': {
    summary: 'the lowest machine ID no live process of this host holds in the claim directory',
    providers: step('host-claim'),
  },
  etcd: {
    summary:
      'a key per machine ID under one etcd lease per server (@ids/machine-etcd); --etcd / IDS_ETCD_ENDPOINTS',
    providers(settings) {
      const endpoints = settings.etcdEndpoints ?? splitList(settings.env.IDS_ETCD_ENDPOINTS);
      // etcd brings gRPC with it: loaded at the first call only.
      return loadedOnce('held through an etcd lease', async () => {
        const { etcdMachineId } = await importOptional(
          '@ids/machine-etcd',
          () => import('@ids/machine-etcd'),
          'the etcd machine-ID source',
        );
        return etcdMachineId({
          ...(endpoints ? { endpoints } : {}),
          bits: settings.layout.machineBits,
          ...(settings.count > 1 ? { shareLease: true } : {}),
        });
      });
    },
  },
  redis: {
    summary:
      'a Redis key with a TTL per machine ID, kept alive together (@ids/machine-redis); --machine-id-redis, else --redis / IDS_REDIS_URL',
    providers(settings) {
      const url = settings.redisUrl ?? (settings.env.IDS_REDIS_URL || undefined);
      if (url === undefined) {
        throw new ServerConfigError(
          'machine-id-source redis: expected a Redis URL (--machine-id-redis, --redis or IDS_REDIS_URL), received none',
        );
      }
      return loadedOnce('held through a Redis key with a TTL', async () => {
        const { redisMachineId } = await importOptional(
          '@ids/machine-redis',
          () => import('@ids/machine-redis'),
          'the redis machine-ID source',
        );
        return redisMachineId({ url, bits: settings.layout.machineBits, ...leaseOf(settings) });
      });
    },
  },
  zookeeper: {
    summary:
      'an ephemeral ZooKeeper node per machine ID, held by one session per server (@ids/machine-zookeeper); --zookeeper / IDS_ZOOKEEPER_CONNECT',
    providers(settings) {
      const connect = settings.zookeeperConnect ?? (settings.env.IDS_ZOOKEEPER_CONNECT?.trim() || undefined);
      return loadedOnce('held through a ZooKeeper session', async () => {
        const { zookeeperMachineId } = await importOptional(
          '@ids/machine-zookeeper',
          () => import('@ids/machine-zookeeper'),
          'the zookeeper machine-ID source',
        );
        // Without a connect string, the package's default (127.0.0.1:2181), as etcd's.
        return zookeeperMachineId({
          ...(connect !== undefined ? { connect } : {}),
          bits: settings.layout.machineBits,
          ...leaseOf(settings),
        });
      });
    },
  },
});

/** The sources `--machine-id-source` names, with a line each for `--help`, in a fixed order. */
export function machineIdSources(): readonly { readonly name: string; readonly summary: string }[] {
  return Object.entries(SOURCES).map(([name, source]) => ({ name, summary: source.summary }));
}

/**
 * The provider of each generator for a source: a name of `machineIdSources()`, or a provider of
 * the caller's own, called once per generator (and again for a re-claim).
 * @throws ServerConfigError for an unknown name, or settings the source cannot work with.
 */
export function machineIdProviders(
  source: string | MachineIdProvider,
  settings: MachineIdSourceSettings,
): (index: number) => MachineIdProvider {
  if (typeof source === 'function') return () => source;
  return machineIdSourceNamed(source).providers(settings);
}

/** The source of a name. @throws ServerConfigError for an unknown name. */
export function machineIdSourceNamed(name: string): MachineIdSourceEntry {
  const source = Object.hasOwn(SOURCES, name) ? SOURCES[name] : undefined;
  if (!source) {
    throw new ServerConfigError(
      `machine-id-source: expected one of ${Object.keys(SOURCES).join(', ')}, received ${JSON.stringify(name)}`,
    );
  }
  return source;
}

/** A comma-separated list, or undefined when empty. */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value.split(',').map((part) => part.trim());
}
