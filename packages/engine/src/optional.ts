import { MissingPackageError } from './errors.js';

/**
 * Loads an optional peer dependency: `load` is the caller's own `() => import('pkg')`, written
 * in the caller's package so that the specifier resolves from there. When `pkg` itself is not
 * installed this throws MissingPackageError naming it (and `also`, the packages the feature
 * needs beside it) and `use`; any other failure, including a package that `pkg` imports being
 * missing, is rethrown as is.
 */
export async function importOptional<T>(
  pkg: string,
  load: () => Promise<T>,
  use: string,
  also: readonly string[] = [],
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isMissing(error, pkg)) throw error;
    const extra = also.length > 0 ? ` (and ${also.join(', ')})` : '';
    throw new MissingPackageError(
      `install ${pkg}${extra} to use ${use}: ${pkg} is not installed`,
      [pkg, ...also],
      {
        cause: error,
      },
    );
  }
}

/** Node's not-found error for `pkg` itself: ESM says "Cannot find package 'pkg'", CJS "Cannot find module 'pkg'". */
function isMissing(error: unknown, pkg: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    new RegExp(`'${pkg.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(/[^']*)?'`).test(message)
  );
}

/**
 * The client package each segment store string needs, one line per store, shared by @ids/segment
 * (which loads it) and the server and CLI (which name it when @ids/segment itself is missing).
 */
export const SEGMENT_STORE_CLIENTS: readonly {
  /** Which store strings this line is for. */
  scheme: RegExp;
  /** The package the store needs beside @ids/segment. */
  client: string;
  /** How messages name the store, e.g. "a postgres:// segment store". */
  use: string;
}[] = [
  { scheme: /^postgres(ql)?:\/\//, client: 'pg', use: 'a postgres:// segment store' },
  { scheme: /^rediss?:\/\//, client: '@ids/machine-redis', use: 'a redis:// segment store' },
  { scheme: /^(pglite|memory):/, client: '@electric-sql/pglite', use: 'a pglite: segment store' },
  { scheme: /^mysql:\/\//, client: 'mysql2', use: 'a mysql:// segment store' },
];

/**
 * What to name when @ids/segment is missing for the store string `where`: the store's client
 * too (it is an optional peer of @ids/segment), and the store's wording.
 */
export function segmentStoreNeeds(where: string): { use: string; also: string[] } {
  const store = SEGMENT_STORE_CLIENTS.find((entry) => entry.scheme.test(where));
  return store ? { use: store.use, also: [store.client] } : { use: 'a segment store', also: [] };
}
