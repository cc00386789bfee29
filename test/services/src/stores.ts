import { hasMariadb, type MariadbServer, startMariadb } from './mariadb.js';
import { hasPostgres, type PostgresServer, startPostgres } from './postgres.js';
import { hasRedis, type RedisServer, startRedis } from './redis.js';

/** One kind of server a segment store runs on, as the tests that run on each of them see it. */
export interface StoreServerKind<S extends PostgresServer | MariadbServer | RedisServer> {
  /** Its name in test titles. */
  readonly name: string;
  /** The variable that points the tests at a server of the user's own (one no test may stop). */
  readonly external: string;
  /** Whether this machine can run one. */
  has(): boolean;
  /** Starts one (or, unless `allowExternal` is false, returns the user's own). */
  start(options?: { readonly allowExternal?: boolean }): Promise<S>;
}

/** The servers of the segment stores: PostgreSQL, MySQL (on MariaDB) and Redis. */
export const storeServers: {
  readonly postgres: StoreServerKind<PostgresServer>;
  readonly mariadb: StoreServerKind<MariadbServer>;
  readonly redis: StoreServerKind<RedisServer>;
} = {
  postgres: { name: 'PostgreSQL', external: 'DATABASE_URL', has: hasPostgres, start: startPostgres },
  mariadb: { name: 'MySQL (MariaDB)', external: 'MYSQL_URL', has: hasMariadb, start: startMariadb },
  redis: { name: 'Redis', external: 'REDIS_URL', has: hasRedis, start: startRedis },
};
