// Where the server's machine IDs come from. Each source hands out one claim (or a fixed number)
// per call; the pool calls it once per generator at start, and again for a generator whose claim
// was fenced and that cannot renew by itself. A source another package provides (Redis, say)
// plugs in with `registerMachineIdSource` and is then named by `--machine-id-source`.
import { type Layout, type MachineIdClaim, resolveMachineId } from '@ids/engine';
import { importOptional } from '@ids/engine/internal';
import { autoMachineId, claimHostMachineId, type Env } from '@ids/machine-file';
import { type InterfaceSource, privateIpMachineId } from '@ids/machine-ip';
import { ServerConfigError } from './errors.js';

/** What a source is told for each machine ID it is asked for. */
export interface MachineIdSourceContext {
  /** The layout of the generator the ID is for (its `machineBits` bound the ID). */
  readonly layout: Layout;
  /** Which generator of the pool, from 0 to `count - 1`. */
  readonly index: number;
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
  /** The TTL in seconds of the redis source's claim keys, when given (else its default, 10). */
  readonly leaseTtlSeconds?: number | undefined;
  /** The interface list for the private-IPv4 step (tests inject one). Default: the host's. */
  readonly interfaces: InterfaceSource | undefined;
  /** One map per pool, for a source to keep what its calls share (a client, a provider). */
  readonly shared: Map<string, unknown>;
}

/** What a source gave: the machine ID or claim for one generator, and how it was chosen. */
export interface AcquiredMachineId {
  /** A fixed machine ID, or a claim the generator watches (fenced when its signal aborts). */
  readonly machineId: number | MachineIdClaim;
  /** How it was chosen, in a sentence (printed at start). */
  readonly how: string;
}

/** A named way to get machine IDs. */
export interface MachineIdSourceDefinition {
  /** What `--machine-id-source` takes, e.g. `host-claim`. */
  readonly name: string;
  /** One line for `--help`. */
  readonly summary: string;
  /**
   * One machine ID for generator `context.index`. Throws (a typed error) when none can be had;
   * the server then does not start, or, for a renewal, tries again later.
   */
  acquire(context: MachineIdSourceContext): AcquiredMachineId | Promise<AcquiredMachineId>;
  /** Frees what the source keeps in `context.shared` (a client), when the pool closes. */
  close?(shared: Map<string, unknown>): void | Promise<void>;
}

const sources = new Map<string, MachineIdSourceDefinition>();

/**
 * Adds a machine-ID source the server can be configured with (`--machine-id-source NAME`); a
 * later registration of the same name replaces the earlier one.
 */
export function registerMachineIdSource(source: MachineIdSourceDefinition): void {
  sources.set(source.name, source);
}

/** The registered sources, in registration order. */
export function machineIdSources(): readonly MachineIdSourceDefinition[] {
  return [...sources.values()];
}

/** The source of a name. @throws ServerConfigError for an unknown name. */
export function machineIdSourceNamed(name: string): MachineIdSourceDefinition {
  const source = sources.get(name);
  if (!source) {
    throw new ServerConfigError(
      `machine-id-source: expected one of ${[...sources.keys()].join(', ')}, received ${JSON.stringify(name)}`,
    );
  }
  return source;
}

/** The explicit IDs: the option, else IDS_MACHINE_ID of the environment (a comma-separated list). */
function explicitIds(context: MachineIdSourceContext): readonly number[] | undefined {
  if (context.machineIds) return context.machineIds;
  return machineIdList(context.env.IDS_MACHINE_ID, 'IDS_MACHINE_ID');
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

function explicitAt(context: MachineIdSourceContext): AcquiredMachineId {
  const ids = explicitIds(context);
  if (!ids || ids.length !== context.count) {
    throw new ServerConfigError(
      `machine-id: expected ${context.count} machine ID${context.count === 1 ? '' : 's'} (one per --machines), received ${ids ? ids.length : 'none'}`,
    );
  }
  const id = ids[context.index] as number;
  if (id > context.layout.maxMachine) {
    throw new ServerConfigError(
      `machine-id: expected integers from 0 to ${context.layout.maxMachine} for the ${context.layout.name} layout, received ${id}`,
    );
  }
  return { machineId: id, how: `machine ID ${id} given explicitly` };
}

function hostClaimOf(context: MachineIdSourceContext, range: { min?: number; max?: number } = {}) {
  const env = context.env;
  const dir = context.claimDir ?? (env.IDS_CLAIM_DIR || undefined);
  const claim = claimHostMachineId(context.layout.machineBits, { ...(dir ? { dir } : {}), ...range });
  return claim;
}

registerMachineIdSource({
  name: 'auto',
  summary:
    'explicit IDs if given, else the auto chain of @ids/machine-file (private IPv4, then a host claim)',
  acquire(context) {
    if (explicitIds(context)) return explicitAt(context);
    // IDS_MACHINE_ID is read by the server itself (as a list), not again by the chain.
    const { IDS_MACHINE_ID: _ignored, ...env } = context.env;
    const auto = autoMachineId({
      bits: context.layout.machineBits,
      env,
      ...(context.interfaces ? { interfaces: context.interfaces } : {}),
      ...(context.claimDir ? { claim: { dir: context.claimDir } } : {}),
    });
    if (auto.step === 'private-ip' && context.count > 1) {
      void Promise.resolve(typeof auto.machineId === 'number' ? undefined : auto.machineId.release());
      throw new ServerConfigError(
        `machines: the private IPv4 address gives one machine ID, and ${context.count} were asked for; use --machine-id-source host-claim or etcd, or --machine-id with ${context.count} IDs`,
      );
    }
    return { machineId: auto.machineId, how: auto.trail.at(-1)?.detail ?? `machine ID ${auto.id}` };
  },
});

registerMachineIdSource({
  name: 'explicit',
  summary: 'the IDs of --machine-id / IDS_MACHINE_ID (a comma-separated list, one per --machines)',
  acquire: explicitAt,
});

registerMachineIdSource({
  name: 'private-ip',
  summary:
    "Go's rule: the low bits of the host's private IPv4 address, held as a host claim (one machine only)",
  acquire(context) {
    if (context.count > 1) {
      throw new ServerConfigError(
        `machines: the private IPv4 address gives one machine ID, and ${context.count} were asked for`,
      );
    }
    const provider = privateIpMachineId(context.interfaces ? { interfaces: context.interfaces } : {});
    const id = provider({ bits: context.layout.machineBits }) as number;
    const claim = hostClaimOf(context, { min: id, max: id });
    return {
      machineId: claim,
      how: `machine ID ${id} from the private IPv4 address, held: ${claim.describe()}`,
    };
  },
});

registerMachineIdSource({
  name: 'host-claim',
  summary: 'the lowest machine ID no live process of this host holds in the claim directory',
  acquire(context) {
    const claim = hostClaimOf(context);
    return { machineId: claim, how: `machine ID ${claim.machineId}: ${claim.describe()}` };
  },
});

registerMachineIdSource({
  name: 'etcd',
  summary: 'an etcd lease per machine ID (@ids/machine-etcd); --etcd / IDS_ETCD_ENDPOINTS',
  async acquire(context) {
    let provider = context.shared.get('etcd') as
      | ((ctx: { bits: number }) => Promise<number | MachineIdClaim>)
      | undefined;
    if (!provider) {
      // Loaded only when asked for: it brings gRPC with it.
      const { etcdMachineId } = await importOptional(
        '@ids/machine-etcd',
        () => import('@ids/machine-etcd'),
        'the etcd machine-ID source',
      );
      const endpoints = context.etcdEndpoints ?? splitList(context.env.IDS_ETCD_ENDPOINTS);
      provider = etcdMachineId({
        ...(endpoints ? { endpoints } : {}),
        bits: context.layout.machineBits,
      }) as never;
      context.shared.set('etcd', provider);
    }
    const claim = await resolveMachineId(context.layout, provider as never);
    const id = typeof claim === 'number' ? claim : claim.machineId;
    return { machineId: claim, how: `machine ID ${id} held through an etcd lease` };
  },
});

registerMachineIdSource({
  name: 'redis',
  summary:
    'a Redis key with a TTL per machine ID (@ids/machine-redis); --machine-id-redis, else --redis / IDS_REDIS_URL',
  async acquire(context) {
    let provider = context.shared.get('redis') as
      | ((ctx: { bits: number }) => Promise<MachineIdClaim>)
      | undefined;
    if (!provider) {
      // Loaded only when asked for, like etcd: the server's cold start does not pay for ioredis.
      const { redisMachineId } = await importOptional(
        '@ids/machine-redis',
        () => import('@ids/machine-redis'),
        'the redis machine-ID source',
      );
      const url = context.redisUrl ?? (context.env.IDS_REDIS_URL || undefined);
      if (url === undefined) {
        throw new ServerConfigError(
          'machine-id-source redis: expected a Redis URL (--machine-id-redis, --redis or IDS_REDIS_URL), received none',
        );
      }
      provider = redisMachineId({
        url,
        bits: context.layout.machineBits,
        ...(context.leaseTtlSeconds !== undefined ? { ttlSeconds: context.leaseTtlSeconds } : {}),
      });
      context.shared.set('redis', provider);
    }
    // One claim (and one connection) per generator: each is kept alive and fenced on its own.
    const claim = await resolveMachineId(context.layout, provider as never);
    const id = typeof claim === 'number' ? claim : claim.machineId;
    return { machineId: claim, how: `machine ID ${id} held through a Redis key with a TTL` };
  },
});

/** A comma-separated list, or undefined when empty. */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value.split(',').map((part) => part.trim());
}
