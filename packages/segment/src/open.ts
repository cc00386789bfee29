import { InvalidArgumentError } from '@ids/engine';
import { type StoreName, storeFor, storeForms } from '@ids/engine/internal';
import { mysqlStore } from './mysql.js';
import { pgliteStore, postgresStore } from './postgres.js';
import { redisStore } from './redis.js';
import type { SegmentStore } from './store.js';
import { receivedUrl } from './url.js';

/** How each segment store of the engine's store table opens from its string. */
const OPENERS: Record<StoreName<'segment'>, (location: string) => Promise<SegmentStore>> = {
  postgres: (location) => postgresStore({ connectionString: location }),
  mysql: (location) => mysqlStore({ connectionString: location }),
  redis: (location) => redisStore({ url: location }),
  pglite: (location) => {
    if (location === 'pglite:' || location === 'memory:') return pgliteStore();
    if (location.startsWith('pglite:')) return pgliteStore({ dataDir: location.slice('pglite:'.length) });
    throw refused(location);
  },
};

const refused = (location: unknown) =>
  new InvalidArgumentError(`store: expected ${storeForms('segment')}, received ${receivedUrl(location)}`);

/**
 * A store from one string, for services and command lines: `postgres://...` (PostgreSQL),
 * `mysql://...` (MySQL or MariaDB, Leaf's `leaf_alloc` table), `redis://...` (Redis), `pglite:`
 * (PGlite in memory) or `pglite:<directory>` (PGlite on disk): the engine's store table. Only
 * the client the string names is loaded.
 *
 * @throws InvalidArgumentError for any other string.
 */
export async function openSegmentStore(location: string): Promise<SegmentStore> {
  const store = storeFor(location, 'segment');
  if (!store) throw refused(location);
  return OPENERS[store.name](location);
}
