// Every store a string can name, in one table: which strings name it, how messages show them,
// and what each feature needs to use it. @ids/segment opens segment stores from it, the CLI's
// `ids lock` opens locks from it, and the CLI and the server name the packages a store needs
// from it. A store is one entry here plus, for each feature it serves, one opener in that
// feature's package (a typed record over these names, so an opener cannot be forgotten). A
// store's `machineId` makes it a step of @ids/machine-file's `auto` chain, which the library, the
// CLI and the server all run: nothing else is written per store for machine IDs.

/** One store of the table. */
export interface StoreEntry {
  /** The store's name: the key of each feature's openers. */
  readonly name: string;
  /** How people write the store's name in prose and tables ("PostgreSQL"). */
  readonly title: string;
  /** Which strings name this store. */
  readonly scheme: RegExp;
  /** The string's form, for messages: what `--store` and `IDS_SEGMENT_STORE` take. */
  readonly form: string;
  /** How the store's strings begin, for messages ("a postgres:// segment store"). */
  readonly prefix: string;
  /** The package a segment store here needs beside @ids/segment; absent: no segments here. */
  readonly segment?: string;
  /** The package the locks here need beside @ids/lock; absent: no locks here. */
  readonly lock?: string;
  /** How the store holds machine IDs, as a step of the `auto` chain; absent: no machine IDs here. */
  readonly machineId?: MachineIdStore;
}

/**
 * A store as a step of the `auto` chain: in the chain only where it is configured (one of `env`
 * set, or a flag of the CLI or server giving it), loaded only when the step runs, and then the
 * package's `provider` function called with where the store is as its `option`. Its title in a
 * trail is the store's title and "claim" (`Redis claim`).
 */
export interface MachineIdStore {
  /** The variables that say where the store is, the first one set winning. */
  readonly env: readonly string[];
  /** The package that claims machine IDs there, an optional peer of whoever runs the chain. */
  readonly package: string;
  /** Its function that makes a provider: `(options) => MachineIdProvider`. */
  readonly provider: string;
  /** The option of that function that takes where the store is, as text. */
  readonly option: string;
}

/** The stores, one line each. */
export const STORES = [
  {
    name: 'postgres',
    title: 'PostgreSQL',
    scheme: /^postgres(ql)?:\/\//,
    form: 'postgres://...',
    prefix: 'postgres://',
    segment: 'pg',
  },
  {
    name: 'mysql',
    title: 'MySQL',
    scheme: /^mysql:\/\//,
    form: 'mysql://...',
    prefix: 'mysql://',
    segment: 'mysql2',
  },
  {
    name: 'redis',
    title: 'Redis',
    scheme: /^rediss?:\/\//,
    form: 'redis://...',
    prefix: 'redis://',
    segment: '@ids/machine-redis',
    lock: '@ids/machine-redis',
    machineId: {
      env: ['IDS_MACHINE_ID_REDIS_URL', 'IDS_REDIS_URL'],
      package: '@ids/machine-redis',
      provider: 'redisMachineId',
      option: 'url',
    },
  },
  {
    name: 'pglite',
    title: 'PGlite',
    scheme: /^(pglite|memory):/,
    form: 'pglite: or pglite:<directory>',
    prefix: 'pglite:',
    segment: '@electric-sql/pglite',
  },
  {
    name: 'etcd',
    title: 'etcd',
    scheme: /^https?:\/\//,
    form: 'http://host:port[,...]',
    prefix: 'http://',
    lock: '@ids/machine-etcd',
    machineId: {
      env: ['IDS_ETCD_ENDPOINTS'],
      package: '@ids/machine-etcd',
      provider: 'etcdMachineId',
      option: 'endpoints',
    },
  },
  {
    name: 'zookeeper',
    title: 'ZooKeeper',
    scheme: /^zookeeper:\/\//,
    form: 'zookeeper://host:port[,...][/chroot]',
    prefix: 'zookeeper://',
    lock: '@ids/machine-zookeeper',
    machineId: {
      env: ['IDS_ZOOKEEPER_CONNECT'],
      package: '@ids/machine-zookeeper',
      provider: 'zookeeperMachineId',
      option: 'connect',
    },
  },
] as const satisfies readonly StoreEntry[];

/** The stores that hold machine IDs, in the table's order (the order of their steps in the chain). */
export function machineIdStores(): (StoreEntry & { readonly machineId: MachineIdStore })[] {
  return STORES.filter((store: StoreEntry) => store.machineId !== undefined) as (StoreEntry & {
    readonly machineId: MachineIdStore;
  })[];
}

/** A feature that stores serve. */
export type StoreFeature = 'segment' | 'lock';

/** The names of the stores that serve `feature`. */
export type StoreName<F extends StoreFeature> = Extract<(typeof STORES)[number], Record<F, string>>['name'];

/** The entry of the store `text` names, if it serves `feature`. */
export function storeFor<F extends StoreFeature>(
  text: unknown,
  feature: F,
): (StoreEntry & { name: StoreName<F> }) | undefined {
  if (typeof text !== 'string') return undefined;
  const entry: StoreEntry | undefined = STORES.find(
    (store: StoreEntry) => store[feature] !== undefined && store.scheme.test(text),
  );
  return entry as (StoreEntry & { name: StoreName<F> }) | undefined;
}

/** What a store string for `feature` must be, for messages: "postgres://..., mysql://..., ...". */
export function storeForms(feature: StoreFeature): string {
  return STORES.filter((store: StoreEntry) => store[feature] !== undefined)
    .map((store) => store.form)
    .join(', ');
}

/**
 * What to name when @ids/segment is missing for the store string `where`: the store's client
 * too (it is an optional peer of @ids/segment), and the store's wording.
 */
export function segmentStoreNeeds(where: string): { use: string; also: string[] } {
  const store = storeFor(where, 'segment');
  return store
    ? { use: `a ${store.prefix} segment store`, also: [store.segment as string] }
    : { use: 'a segment store', also: [] };
}
