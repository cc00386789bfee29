import { InvalidArgumentError } from '@ids/engine';
import { mysqlStore } from './mysql.js';
import { pgliteStore, postgresStore } from './postgres.js';
import { redisStore } from './redis.js';
import type { SegmentStore } from './store.js';
import { receivedUrl } from './url.js';

/**
 * A store from one string, for services and command lines: `postgres://...` (PostgreSQL),
 * `mysql://...` (MySQL or MariaDB, Leaf's `leaf_alloc` table), `redis://...` (Redis), `pglite:`
 * (PGlite in memory) or `pglite:<directory>` (PGlite on disk). Only the client the string names
 * is loaded.
 *
 * @throws InvalidArgumentError for any other string.
 */
export async function openSegmentStore(location: string): Promise<SegmentStore> {
  if (typeof location === 'string') {
    if (/^postgres(ql)?:\/\//.test(location)) return postgresStore({ connectionString: location });
    if (/^mysql:\/\//.test(location)) return mysqlStore({ connectionString: location });
    if (/^rediss?:\/\//.test(location)) return redisStore({ url: location });
    if (location === 'pglite:' || location === 'memory:') return pgliteStore();
    if (location.startsWith('pglite:')) return pgliteStore({ dataDir: location.slice('pglite:'.length) });
  }
  throw new InvalidArgumentError(
    `store: expected postgres://..., mysql://..., redis://..., pglite: or pglite:<directory>, received ${receivedUrl(location)}`,
  );
}
