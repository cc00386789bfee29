// The PostgreSQL and PGlite stores. Each client is imported inside its factory, so that
// importing @ids/segment loads neither pg nor the PGlite WASM until a store is made.
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from '@ids/engine';
import { errorText, importOptional, received } from '@ids/engine/internal';
import { lockFile } from '@ids/machine-file';
import {
  checkSqlStoreOptions,
  type SqlClient,
  type SqlSegmentStore,
  type SqlStoreOptions,
  sqlSegmentStore,
} from './sql.js';
import { receivedUrl } from './url.js';

/** How `postgresStore` reaches PostgreSQL. */
export interface PostgresStoreOptions extends SqlStoreOptions {
  /**
   * A `postgres://` URL; the store opens a `pg` pool and closes it on `close()`. One that does
   * not parse (a port outside 1 to 65535, say) is InvalidArgumentError, its password masked.
   */
  readonly connectionString?: string;
  /** Your own `pg` Pool or Client (anything with `query`): used as is, never closed. */
  readonly client?: SqlClient;
  /** Connections the store's own pool may open. Default 4. */
  readonly maxConnections?: number;
  /** How long a connection attempt or a statement may take before it fails, in ms. Default 5000. */
  readonly timeoutMs?: number;
}

/**
 * A segment store on a real PostgreSQL server, through `pg` (node-postgres): give it a URL or
 * your own pool. The table is created on the first `createTag`.
 *
 * @throws InvalidArgumentError when neither or both of connectionString and client are given,
 * or for a bad table name; StepOffsetPlanError for a bad `stepOffset`.
 */
export async function postgresStore(options: PostgresStoreOptions): Promise<SqlSegmentStore> {
  const { connectionString, client } = options ?? {};
  if ((connectionString === undefined) === (client === undefined)) {
    throw new InvalidArgumentError(
      `postgresStore: expected exactly one of connectionString and client, received ${receivedUrl(connectionString)} and ${received(client)}`,
    );
  }
  checkSqlStoreOptions(options);
  if (client !== undefined) {
    if (typeof client?.query !== 'function') {
      throw new InvalidArgumentError(`client: expected a pg Pool or Client, received ${received(client)}`);
    }
    return sqlSegmentStore(client, 'postgres', options);
  }
  if (typeof connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(connectionString)) {
    throw new InvalidArgumentError(`expected a postgres:// URL, received ${receivedUrl(connectionString)}`, {
      option: 'connectionString',
    });
  }
  const timeoutMs = options.timeoutMs ?? 5000;
  const { default: pg } = await importOptional('pg', () => import('pg'), 'a postgres:// segment store');
  // The pool reads the URL only when it first connects, so a port past 65535 failed createTag
  // with a TypeError. A client reads it in its constructor, with pg's own parser (which takes
  // more than a WHATWG URL: host lists, an empty host with ?host=/socket): made here and never
  // connected, it refuses the string up front. pg masks the string in its error; the message
  // is kept without the error all the same (see url.ts).
  try {
    new pg.Client({ connectionString });
  } catch (error) {
    throw new InvalidArgumentError(
      `expected a postgres:// URL pg can read, received ${receivedUrl(connectionString)}: ${errorText(error)}`,
      { option: 'connectionString' },
    );
  }
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  // A server that goes away makes idle clients emit 'error'; unhandled, that would end the
  // process. The next query fails instead, and Segments reports it once both buffers are empty.
  pool.on('error', () => undefined);
  // A client the pool has already let go (pool.end() resolves before the sockets close) has no
  // listener left: a server shutting down at that moment would end the process too.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return sqlSegmentStore(pool, 'postgres', options, () => pool.end());
}

/** Where `pgliteStore` keeps its database. */
export interface PgliteStoreOptions extends SqlStoreOptions {
  /**
   * A directory for the database files (created if missing). One store at a time may have it
   * open: the store holds the lock file `ids.lock` in it until `close()` (or the process ends),
   * and another opening, in this process or another, fails with HeldFileInUseError naming the holder.
   * Default: in memory, which forgets every tag when the process ends (fine for tests and demos
   * only).
   */
  readonly dataDir?: string;
  /** Your own PGlite instance (anything with `query`): used as is, never closed. */
  readonly client?: SqlClient;
}

/**
 * A segment store on PGlite, the PostgreSQL engine compiled to WASM and run in this process:
 * the embedded default, no server to start. Same table and statement as `postgresStore`.
 *
 * @throws InvalidArgumentError for a bad dataDir or table name; StepOffsetPlanError for a bad
 * `stepOffset`; HeldFileInUseError
 * (from @ids/machine-file, code ERR_IDS_HELD_FILE_IN_USE) when another store, in this process or
 * another, has the dataDir open; HeldFileCorruptError for an `ids.lock` this package did not
 * write; FileWriteError when the directory cannot be created or written.
 */
export async function pgliteStore(options: PgliteStoreOptions = {}): Promise<SqlSegmentStore> {
  checkSqlStoreOptions(options);
  if (options.client !== undefined) {
    if (typeof options.client?.query !== 'function') {
      throw new InvalidArgumentError(
        `client: expected a PGlite instance, received ${received(options.client)}`,
      );
    }
    return sqlSegmentStore(options.client, 'pglite', options);
  }
  if (options.dataDir !== undefined && (typeof options.dataDir !== 'string' || options.dataDir === '')) {
    throw new InvalidArgumentError(
      `dataDir: expected a directory path, received ${received(options.dataDir)}`,
    );
  }
  const { PGlite } = await importOptional(
    '@electric-sql/pglite',
    () => import('@electric-sql/pglite'),
    'a pglite: segment store',
  );
  if (options.dataDir === undefined) {
    const db = await PGlite.create();
    return sqlSegmentStore(db, 'pglite', options, () => db.close());
  }
  // PGlite has no lock of its own: two processes on one directory both start and hand out the
  // same IDs. So the directory is locked before it is opened, for as long as the store is open.
  const dataDir = resolve(options.dataDir);
  const lock = lockFile(join(dataDir, PGLITE_LOCK_FILE), { what: `the PGlite directory ${dataDir}` });
  let db: Awaited<ReturnType<typeof PGlite.create>>;
  try {
    db = await PGlite.create({ dataDir });
  } catch (error) {
    await lock.release();
    throw error;
  }
  // Every statement checks the lock first: one lost (see FileLock.verify) fails it instead.
  const client: SqlClient = {
    query(text, values) {
      lock.verify();
      return db.query(text, values);
    },
  };
  const close = async () => {
    try {
      await db.close();
    } finally {
      await lock.release();
    }
  };
  try {
    return sqlSegmentStore(client, 'pglite', options, close);
  } catch (error) {
    await close();
    throw error;
  }
}

/** The lock file `pgliteStore` keeps in its data directory while the store is open. */
const PGLITE_LOCK_FILE = 'ids.lock';
