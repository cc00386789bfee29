// The stores of the `auto` chain (etcd, Redis, ZooKeeper): one step per entry of the engine's
// store table that has a `machineId` part, so a new store is one entry there. A store's step is
// in the chain only where the store is configured, by the same variables for the library, the
// CLI and the server; its package is imported by name when the step first runs, never before
// (a gRPC or Redis client costs tens of ms to load, and this package cannot depend on the store
// packages, which depend on it through their tests).
import {
  InvalidArgumentError,
  type MachineIdClaim,
  type MachineIdProvider,
  type NamedMachineIdProvider,
} from '@ids/engine';
import {
  errorText,
  idOf,
  importOptional,
  type MachineIdStore,
  machineIdStores,
  type StoreEntry,
} from '@ids/engine/internal';
import type { Env } from './dirs.js';

/** A store's place given on a command line rather than in a variable: `--zookeeper zk1:2181`. */
export interface StoreFlag {
  /** Where the store is, as the flag gives it. */
  readonly value: string;
  /** The flag, for messages: `--zookeeper`. */
  readonly flag: string;
}

/** What the store steps work from. */
export interface StoreStepsOptions {
  /** Where the stores' variables are read (IDS_REDIS_URL, IDS_ETCD_ENDPOINTS, ...). Default: process.env. */
  readonly env?: Env;
  /**
   * Stores given by flags, by their name in the store table (`redis`, `etcd`, `zookeeper`); a
   * flag wins over the store's variables. Default none.
   */
  readonly storeFlags?: Readonly<Record<string, StoreFlag | undefined>>;
  /** Lease TTL in whole seconds of a store's claims. Default: the store package's (10). */
  readonly ttlSeconds?: number;
  /**
   * Hold every ID this chain claims in a store under one lease (one connection, one keepalive;
   * on ZooKeeper one session), fenced together: for a process that runs the chain once per
   * generator (ids-server's pool). Default false.
   */
  readonly shareLease?: boolean;
  /**
   * Imports a store's package by name. Default: `import(name)` from this package, which finds a
   * package the application installed. The CLI and the server pass their own, which finds the
   * optional peers they declare.
   */
  readonly importPackage?: (name: string) => Promise<unknown>;
}

/** Where a store is and who said so (a flag or a variable), or undefined when nothing configures it. */
function located(
  store: StoreEntry & { readonly machineId: MachineIdStore },
  options: StoreStepsOptions,
): { readonly at: string; readonly from: string } | undefined {
  const flag = options.storeFlags?.[store.name];
  if (flag && flag.value.trim() !== '') return { at: flag.value.trim(), from: flag.flag };
  const env = options.env ?? process.env;
  const variable = store.machineId.env.find((name) => env[name]?.trim());
  return variable === undefined ? undefined : { at: (env[variable] as string).trim(), from: variable };
}

/** A store's step title in a trail, from the store's title: `Redis claim`. */
const stepTitle = (store: StoreEntry) => `${store.title} claim`;

/** Where a store is, for a trail: a password in a URL hidden. */
function shown(at: string): string {
  try {
    const url = new URL(at);
    if (!url.password) return at;
    url.password = '***';
    return url.toString();
  } catch {
    return at;
  }
}

/** The provider of a store's package, made from where the store is; an option it refuses is named as the flag or variable that gave it. */
async function made(
  store: StoreEntry & { readonly machineId: MachineIdStore },
  where: { readonly at: string; readonly from: string },
  options: StoreStepsOptions,
): Promise<MachineIdProvider> {
  const { machineId } = store;
  const load = options.importPackage ?? ((name: string) => import(name));
  const pkg = (await importOptional(
    machineId.package,
    () => load(machineId.package),
    `a ${stepTitle(store)} (${[...machineId.env].join(', ')})`,
  )) as Record<string, unknown>;
  const make = pkg[machineId.provider];
  if (typeof make !== 'function') {
    throw new TypeError(
      `${machineId.package} has no function ${machineId.provider} (the store table names it)`,
    );
  }
  try {
    return make({
      [machineId.option]: where.at,
      ...(options.ttlSeconds !== undefined && { ttlSeconds: options.ttlSeconds }),
      ...(options.shareLease && { shareLease: true }),
    }) as MachineIdProvider;
  } catch (error) {
    // The store's own check names its option (`connect: expected host:port`); the user typed a
    // flag or a variable. Known by its code, not its class: from this package's CommonJS build
    // the store package is imported as ES modules, with the engine's classes of that build.
    const { code, option } = error as { code?: unknown; option?: unknown };
    if (error instanceof Error && code === 'ERR_IDS_INVALID_ARGUMENT' && option === machineId.option) {
      throw new InvalidArgumentError(error.message.slice(`${machineId.option}: `.length), {
        option: where.from,
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * The chain's steps for the stores configured in `options` (by a flag, else a variable), in the
 * store table's order: Redis, etcd, ZooKeeper. Each claims an ID in its store and notes where; a
 * store that was asked for but fails (unreachable, refused, full, its package not installed:
 * MissingPackageError, ERR_IDS_MISSING_PACKAGE) stops the chain with that error instead of
 * falling through, since a host-derived ID beside a store-held fleet could repeat one of its IDs.
 * One step makes its store's provider once, so every claim it makes shares the connection.
 */
export function storeSteps(options: StoreStepsOptions = {}): NamedMachineIdProvider[] {
  return machineIdStores().flatMap((store) => {
    const where = located(store, options);
    if (where === undefined) return [];
    let provider: Promise<MachineIdProvider> | undefined;
    const step: NamedMachineIdProvider = {
      name: store.name,
      title: stepTitle(store),
      async provider({ bits, note }) {
        const place = `${store.title} at ${shown(where.at)}`;
        let claim: number | MachineIdClaim;
        try {
          provider ??= made(store, where, options);
          claim = await (await provider)({ bits });
        } catch (error) {
          note?.(`could not claim a machine ID in ${place} (${where.from}): ${errorText(error)}`);
          throw error;
        }
        const key = typeof claim === 'object' && 'key' in claim ? ` (key ${String(claim.key)})` : '';
        note?.(`claimed machine ID ${idOf(claim)} in ${place}${key}`);
        return claim;
      },
    };
    return [step];
  });
}

/** The store rows of the chain's table: each store's name, title and line, the variables that configure it, its package. */
export function storeRows(): {
  readonly name: string;
  readonly title: string;
  readonly summary: string;
  readonly env: readonly string[];
  readonly package: string;
}[] {
  return machineIdStores().map((store) => ({
    name: store.name,
    title: stepTitle(store),
    summary: `an ID claimed in ${store.title}, where ${store.machineId.env.join(' or ')} says (${store.machineId.package})`,
    env: store.machineId.env,
    package: store.machineId.package,
  }));
}
