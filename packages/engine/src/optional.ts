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
