// The MySQL (or MariaDB) store: the options, the pool, and which scheme runs on it: Leaf's own
// `leaf_alloc` (schemes/leaf-alloc.ts), the design's ticket table (schemes/ticket.ts), or the
// ticket table on several servers with step/offset (schemes/step-offset.ts). mysql2 is imported
// inside the factory, so importing @ids/segment does not load it.
import { InvalidArgumentError } from '@ids/engine';
import { checkInteger, errorText, importOptional, received } from '@ids/engine/internal';
import { type MysqlPool, mysqlDialect, STATEMENT_TIMEOUT_MS } from './mysql-dialect.js';
import { mysqlLeafAlloc } from './schemes/leaf-alloc.js';
import { checkStepOffset, type StepOffsetPlan } from './schemes/step-offset.js';
import { mysqlTicket } from './schemes/ticket.js';
import { checkIdentifier } from './sql.js';
import { checkedOperations, type SegmentStore } from './store.js';
import { parseConnectionString, receivedUrl } from './url.js';

/** How `mysqlStore` reaches MySQL (or MariaDB) and which scheme it runs. */
export interface MysqlStoreOptions {
  /**
   * A `mysql://user:password@host:port/database` URL; the store opens a mysql2 pool and ends it
   * on `close()`. One that does not parse, has a port outside 1 to 65535 or names no database is
   * InvalidArgumentError, its password masked.
   */
  readonly connectionString?: string;
  /** Your own mysql2 promise pool: used as is, never ended. */
  readonly client?: MysqlPool;
  /** Connections the store's own pool may open. Default 4. */
  readonly maxConnections?: number;
  /** How long a connection attempt or a statement may take before it fails, in ms. Default 5000. */
  readonly timeoutMs?: number;
  /**
   * `"leaf"` (default): segments from Leaf's `leaf_alloc` table. `"ticket"`: one ID per round
   * trip from the design's ticket table.
   */
  readonly scheme?: 'leaf' | 'ticket';
  /** The table: default `leaf_alloc` (leaf) or `sequence` (ticket); a plain lower-case identifier. */
  readonly table?: string;
  /**
   * Step/offset: the ticket table on each of `servers` servers, this one at `offset` (1 to
   * servers; the server's auto_increment_offset). `blockSize` is 1 or left out. Checked, see
   * StepOffsetPlanError.
   */
  readonly stepOffset?: StepOffsetPlan;
}

/** A MySQL segment store plus the pool it runs on (for `mysqlMachineId`). */
export interface MysqlSegmentStore extends SegmentStore {
  /** The pool this store uses; `close()` ends it only if the store opened it. */
  readonly mysql: MysqlPool;
}

/** What `connectionString` must be, for messages. */
const MYSQL_URL = 'a mysql://user:password@host:port/database URL';

/** Opens mysql2's pool on a checked `mysql://` URL. */
async function openPool(
  connectionString: unknown,
  maxConnections: number,
  timeoutMs: number,
): Promise<{ pool: MysqlPool; close: () => Promise<void> }> {
  const url = parseConnectionString(connectionString, /^mysql:\/\//, MYSQL_URL);
  // Without a database every statement fails with "no database selected" (1046): refused here.
  if (!/^\/[^/]+$/.test(url.pathname)) {
    throw new InvalidArgumentError(
      `expected ${MYSQL_URL}, received ${receivedUrl(connectionString)}: it names ${url.pathname.length > 1 ? 'a path, not a database' : 'no database'}`,
      { option: 'connectionString' },
    );
  }
  const { createPool } = await importOptional(
    'mysql2',
    () => import('mysql2/promise'),
    'a mysql:// segment store',
  );
  let own: ReturnType<typeof createPool>;
  try {
    own = createPool({
      uri: url.href,
      connectionLimit: maxConnections,
      connectTimeout: timeoutMs,
      // BIGINT columns as strings: exact past 2^53 (the statements cast to text as well, for a
      // pool given without these settings).
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
  } catch (error) {
    // mysql2 reads the URL's query as options (ssl, charset, ...) and throws on one it cannot
    // use. Its message names the option; the password is masked in it all the same, and the
    // error is not kept as the cause (see url.ts).
    let message = errorText(error);
    for (const secret of [url.password, decodeURIComponent(url.password)]) {
      if (secret !== '') message = message.split(secret).join('***');
    }
    throw new InvalidArgumentError(
      `expected ${MYSQL_URL} whose query options mysql2 takes, received ${receivedUrl(connectionString)}: ${message}`,
      { option: 'connectionString' },
    );
  }
  // A server that goes away makes idle connections emit 'error'; unhandled, that would end the
  // process. The next statement fails instead, and Segments reports it once both buffers are empty.
  own.on('connection', (conn) => conn.on('error', () => undefined));
  return { pool: own as unknown as MysqlPool, close: () => own.end() };
}

/**
 * A segment store on MySQL or MariaDB, through mysql2 (prepared statements, IDs read as
 * strings). The default runs on Leaf's own `leaf_alloc` table as Leaf creates it, so a Leaf
 * database works unchanged and a tag keeps issuing above where Leaf stopped; `scheme: "ticket"`
 * and `stepOffset` run the design's ticket table instead.
 *
 * @throws InvalidArgumentError when neither or both of connectionString and client are given,
 * or for a bad table name or setting; StepOffsetPlanError for a bad `stepOffset`, or one given
 * with the leaf scheme.
 */
export async function mysqlStore(options: MysqlStoreOptions): Promise<MysqlSegmentStore> {
  const { connectionString, client } = options ?? {};
  if ((connectionString === undefined) === (client === undefined)) {
    throw new InvalidArgumentError(
      `mysqlStore: expected exactly one of connectionString and client, received ${receivedUrl(connectionString)} and ${received(client)}`,
    );
  }
  const scheme = options.scheme ?? (options.stepOffset === undefined ? 'leaf' : 'ticket');
  if (scheme !== 'leaf' && scheme !== 'ticket') {
    throw new InvalidArgumentError(
      `scheme: expected "leaf" or "ticket", received ${received(options.scheme)}`,
    );
  }
  if (scheme === 'leaf' && options.stepOffset !== undefined) {
    throw new InvalidArgumentError(
      'stepOffset: runs on the ticket table; expected scheme "ticket", received "leaf"',
    );
  }
  const plan = options.stepOffset === undefined ? undefined : checkStepOffset(options.stepOffset, 'one');
  const table = checkIdentifier(options.table ?? (scheme === 'leaf' ? 'leaf_alloc' : 'sequence'), 'table');
  const timeoutMs = checkInteger(options.timeoutMs ?? STATEMENT_TIMEOUT_MS, 'timeoutMs', 1, 2 ** 31 - 1);
  let pool: MysqlPool;
  let close = async () => {};
  if (client !== undefined) {
    if (typeof client?.getConnection !== 'function') {
      throw new InvalidArgumentError(`client: expected a mysql2 promise pool, received ${received(client)}`);
    }
    pool = client;
  } else {
    const maxConnections = checkInteger(options.maxConnections ?? 4, 'maxConnections', 1, 1000);
    ({ pool, close } = await openPool(connectionString, maxConnections, timeoutMs));
  }
  const db = mysqlDialect(pool, timeoutMs, 'segment');
  const operations = scheme === 'leaf' ? mysqlLeafAlloc(db, table) : mysqlTicket(db, table, plan);
  const kind = plan ? 'mysql step/offset' : scheme === 'leaf' ? 'mysql' : 'mysql ticket';
  return { kind, mysql: pool, close, ...checkedOperations(operations) };
}
