// The MySQL store, three ways: Leaf's own `leaf_alloc` table exactly as Leaf creates it, the
// design's ticket table (`REPLACE INTO ...; SELECT LAST_INSERT_ID()`, one ID per round trip),
// and the ticket table on several ID servers with step/offset (auto_increment_increment and
// _offset), the plan of servers checked. mysql2 is imported inside the factory, so importing
// @ids/segment does not load it.
import { IdsError, InvalidArgumentError } from '@ids/engine';
import { checkInteger, errorText, importOptional, received } from '@ids/engine/internal';
import {
  StepOffsetPlanError,
  StoreCorruptError,
  StoreSchemaError,
  StoreUnavailableError,
  TagExistsError,
  UnknownTagError,
} from './errors.js';
import { checkIdentifier } from './sql.js';
import {
  type CheckedOperations,
  checkedOperations,
  MAX_ID,
  rangeEndingAt,
  type SegmentStore,
  storedMaxId,
  tagExists,
} from './store.js';
import { parseConnectionString, receivedUrl } from './url.js';

/** One connection of a pool, as mysql2's promise API has it. */
export interface MysqlConnection {
  /** A prepared statement with `?` parameters; resolves with `[rows or result, fields]`. */
  execute(
    options: { sql: string; timeout?: number },
    values?: (string | number | null)[],
  ): Promise<[unknown, unknown]>;
  /** A statement over the text protocol (transaction control, DDL). */
  query(options: { sql: string; timeout?: number }): Promise<[unknown, unknown]>;
  /** Gives the connection back to its pool. */
  release(): void;
  /** Closes the connection and takes it out of its pool (after a fatal error). */
  destroy(): void;
}

/** What the MySQL store needs from a client: a mysql2 promise pool (`mysql2/promise` createPool). */
export interface MysqlPool {
  /** A connection of the pool, for statements that must share one (a transaction, LAST_INSERT_ID()). */
  getConnection(): Promise<MysqlConnection>;
}

/** Step/offset: which of how many ID servers this one is. */
export interface StepOffsetPlan {
  /** How many ID servers share the IDs: each server's `auto_increment_increment`. 1 to 65,535. */
  readonly servers: number;
  /** This server's place, 1 to `servers`: its `auto_increment_offset`. */
  readonly offset: number;
}

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
  /** Ticket scheme on several ID servers: this server's place in the plan (checked, see StepOffsetPlanError). */
  readonly stepOffset?: StepOffsetPlan;
}

/** A MySQL segment store plus the pool it runs on (for `mysqlMachineId`). */
export interface MysqlSegmentStore extends SegmentStore {
  /** The pool this store uses; `close()` ends it only if the store opened it. */
  readonly mysql: MysqlPool;
}

/** What `connectionString` must be, for messages. */
const MYSQL_URL = 'a mysql://user:password@host:port/database URL';

/** How long a statement may take by default, in ms (a stopped server must not hang a caller). */
export const STATEMENT_TIMEOUT_MS = 5000;

/** The step/offset plan's table: one row, written on first use. */
export const PLAN_TABLE = 'ids_step_offset_plan';

/** MySQL's error number of a failed statement (mysql2 calls it errno). */
function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/** Attempts in a row, the first included, before a statement that keeps being a deadlock's victim fails with StoreUnavailableError. */
const DEADLOCK_ATTEMPTS = 50;

/**
 * InnoDB's errors for a statement it rolled back as a lock conflict's victim. 1213: a deadlock
 * on rows. 1467 ("Failed to read auto-increment value"): the deadlock or lock wait timeout was
 * met while taking the table's AUTO-INC lock, which an `INSERT ... SELECT` holds for the whole
 * statement. Concurrent createTag calls on one ticket table meet it: on a local MariaDB, 100
 * rounds of 20 at once gave 22 of them, and 183 with allocations running beside them.
 */
function deadlockVictim(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === 1213 || errno === 1467;
}

/**
 * Runs `attempt` again while InnoDB picks it as a deadlock's victim. REPLACE is a delete and an
 * insert on a unique key: concurrent REPLACEs of one tag take gap and insert-intention locks that
 * can wait on each other, and InnoDB then rolls one transaction back whole; createTag's INSERT
 * waits on the AUTO-INC lock the same way. Nothing of the victim was issued, so running it again
 * is safe; each deadlock lets the other transaction through, so the callers as a whole always
 * progress. Past DEADLOCK_ATTEMPTS in a row for one caller it is StoreUnavailableError
 * (contention the store cannot serve), never an untyped driver error.
 */
async function retryDeadlocks<T>(where: string, what: string, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!deadlockVictim(error)) throw error;
      if (n >= DEADLOCK_ATTEMPTS) {
        throw new StoreUnavailableError(
          `${where}: expected ${what} to get through, received ${n} deadlocks in a row (InnoDB error ${errnoOf(error)})`,
          { cause: error },
        );
      }
    }
  }
}

// Error numbers that say the connection string (or the user's pool) names something the server
// does not have: retrying cannot help, so they are typed as such, not as the store being away.
const MISCONFIGURED: Record<number, string> = {
  1044: 'the user may not use this database',
  1045: 'the server refused the user or password',
  1046: "the connection names no database (mysql://.../<database>, or the pool's `database`)",
  1049: 'the server has no such database',
};

/**
 * Whether the server answered: its error packet carries MySQL's error number, 1000 or more. A
 * connection refused or reset is the socket's error, whose errno is negative (-111), and a
 * timeout has none.
 */
function serverAnswered(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno !== undefined && errno > 0;
}

/**
 * A failed statement, typed: a misconfiguration, a missing table, a server that did not answer
 * (StoreUnavailableError), or left as is (an answer such as a deadlock, which callers retry).
 */
function typedMysqlError(error: unknown, where: string): unknown {
  if (error instanceof IdsError) return error;
  if (!serverAnswered(error)) {
    return new StoreUnavailableError(
      `${where}: expected the MySQL server to answer, received ${errorText(error)}`,
      {
        cause: error,
      },
    );
  }
  const errno = errnoOf(error);
  if (errno !== undefined && errno in MISCONFIGURED) {
    return new InvalidArgumentError(
      `${where}: expected a database the connection can use; ${MISCONFIGURED[errno]}: ${errorText(error)}`,
      { cause: error },
    );
  }
  if (errno === 1146) {
    return new UnknownTagError(`${where}: the table does not exist; register the tag first (createTag)`, {
      cause: error,
    });
  }
  // 1054 unknown column: the table was changed under a running store.
  if (errno === 1054) {
    return new StoreSchemaError(`${where}: ${errorText(error)}`, { cause: error });
  }
  return error;
}

type Run = {
  /** A prepared statement; resolves with its rows (or the result of a write). */
  (sql: string, values?: (string | number | null)[]): Promise<unknown>;
  /** A statement over the text protocol. */
  text(sql: string): Promise<unknown>;
};

/**
 * Runs `body` on one connection of the pool, inside a transaction when `transaction` is set
 * (committed when `body` resolves, rolled back when it throws). A connection whose statement
 * failed without a server answer (a dropped socket, a timeout) is destroyed, not returned.
 */
export async function onConnection<T>(
  pool: MysqlPool,
  timeoutMs: number,
  where: string,
  transaction: boolean,
  body: (run: Run) => Promise<T>,
): Promise<T> {
  let conn: MysqlConnection;
  try {
    conn = await pool.getConnection();
  } catch (error) {
    throw typedMysqlError(error, where);
  }
  let broken = false;
  const guard = async (statement: Promise<[unknown, unknown]>) => {
    try {
      return (await statement)[0];
    } catch (error) {
      if (!serverAnswered(error)) broken = true;
      throw typedMysqlError(error, where);
    }
  };
  const run = ((sql: string, values?: (string | number | null)[]) =>
    guard(conn.execute({ sql, timeout: timeoutMs }, values))) as Run;
  run.text = (sql: string) => guard(conn.query({ sql, timeout: timeoutMs }));
  try {
    if (!transaction) return await body(run);
    await run.text('START TRANSACTION');
    let result: T;
    try {
      result = await body(run);
    } catch (error) {
      if (!broken) await run.text('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await run.text('COMMIT');
    return result;
  } finally {
    if (broken) conn.destroy();
    else conn.release();
  }
}

const rowsOf = (result: unknown) => (Array.isArray(result) ? result : []) as Record<string, unknown>[];
const affected = (result: unknown) => Number((result as { affectedRows?: unknown })?.affectedRows ?? 0);

/** A column as information_schema describes it. */
interface Column {
  readonly type: string;
  readonly key: string;
  readonly extra: string;
}

/** The columns of `table` in the connection's database; none when the table does not exist. */
async function columnsOf(run: Run, table: string, where: string): Promise<Map<string, Column>> {
  const rows = rowsOf(
    await run(
      `SELECT DATABASE() AS db, c.COLUMN_NAME AS name, c.DATA_TYPE AS type, c.COLUMN_KEY AS k, c.EXTRA AS extra
       FROM (SELECT 1) AS one LEFT JOIN information_schema.COLUMNS AS c
         ON c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = ?`,
      [table],
    ),
  );
  if (rows[0]?.db === null || rows[0]?.db === undefined) {
    throw new InvalidArgumentError(
      `${where}: expected the connection string to name a database (mysql://.../<database>), received none`,
    );
  }
  const columns = new Map<string, Column>();
  for (const row of rows) {
    if (typeof row.name !== 'string') continue;
    columns.set(row.name.toLowerCase(), {
      type: String(row.type).toLowerCase(),
      key: String(row.k),
      extra: String(row.extra).toLowerCase(),
    });
  }
  return columns;
}

const INTEGER_TYPES = ['tinyint', 'smallint', 'mediumint', 'int', 'bigint'];
const TEXT_TYPES = ['varchar', 'char'];

/** Each wanted column with one of its types (and key): else StoreSchemaError, naming what is missing. */
function checkColumns(
  columns: Map<string, Column>,
  wanted: Record<string, { types: string[]; key?: string[]; extra?: string }>,
  where: string,
): void {
  const wrong: string[] = [];
  for (const [name, rule] of Object.entries(wanted)) {
    const column = columns.get(name);
    if (!column) wrong.push(`${name}: missing`);
    else if (!rule.types.includes(column.type))
      wrong.push(`${name}: ${column.type}, expected ${rule.types.join(' or ')}`);
    else if (rule.key && !rule.key.includes(column.key))
      wrong.push(
        `${name}: ${column.key ? `key ${column.key}` : 'no key'}, expected ${rule.key.join(' or ')} (a unique key on it alone)`,
      );
    else if (rule.extra && !column.extra.includes(rule.extra)) wrong.push(`${name}: not ${rule.extra}`);
  }
  if (wrong.length > 0) {
    throw new StoreSchemaError(
      `${where}: the table is not the shape this store reads (${wrong.join('; ')}); nothing was written`,
    );
  }
}

/**
 * Runs `check` once per store and keeps its success; a failure is forgotten, so the next call
 * checks again (a table created meanwhile, a server back).
 */
function once(check: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= check().catch((error: unknown) => {
      done = undefined;
      throw error;
    });
    return done;
  };
}

function checkPlan(plan: StepOffsetPlan | undefined): StepOffsetPlan | undefined {
  if (plan === undefined) return undefined;
  if (typeof plan !== 'object' || plan === null) {
    throw new InvalidArgumentError(`stepOffset: expected { servers, offset }, received ${received(plan)}`);
  }
  const servers = checkInteger(plan.servers, 'stepOffset.servers', 1, 65_535);
  const offset = checkInteger(plan.offset, 'stepOffset.offset', 1, 65_535);
  if (offset > servers) {
    throw new StepOffsetPlanError(
      `stepOffset: expected an offset from 1 to ${servers} (one per server), received ${offset}: with increment ${servers} it would issue ${offset}, ${offset + servers}, ..., which lie in the series of server ${((offset - 1) % servers) + 1}`,
    );
  }
  return { servers, offset };
}

/**
 * A segment store on MySQL or MariaDB, through mysql2 (prepared statements, IDs read as
 * strings). The default runs on Leaf's own `leaf_alloc` table as Leaf creates it, so a Leaf
 * database works unchanged and a tag keeps issuing above where Leaf stopped; `scheme: "ticket"`
 * and `stepOffset` run the design's ticket table instead.
 *
 * @throws InvalidArgumentError when neither or both of connectionString and client are given,
 * or for a bad table name or setting; StepOffsetPlanError for an offset outside the plan.
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
  const plan = checkPlan(options.stepOffset);
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
    const url = parseConnectionString(connectionString, /^mysql:\/\//, MYSQL_URL);
    // Without a database every statement fails with "no database selected" (1046): refused here.
    if (!/^\/[^/]+$/.test(url.pathname)) {
      throw new InvalidArgumentError(
        `expected ${MYSQL_URL}, received ${receivedUrl(connectionString)}: it names ${url.pathname.length > 1 ? 'a path, not a database' : 'no database'}`,
        { option: 'connectionString' },
      );
    }
    const maxConnections = checkInteger(options.maxConnections ?? 4, 'maxConnections', 1, 1000);
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
    // A server that goes away makes idle connections emit 'error'; unhandled, that would end
    // the process. The next statement fails instead, and Segments reports it once both
    // buffers are empty.
    own.on('connection', (conn) => conn.on('error', () => undefined));
    pool = own as unknown as MysqlPool;
    close = () => own.end();
  }
  const kind = plan ? 'mysql step/offset' : scheme === 'leaf' ? 'mysql' : 'mysql ticket';
  const base = { kind, mysql: pool, close };
  return scheme === 'leaf'
    ? { ...base, ...checkedOperations(leafStore(pool, table, timeoutMs)) }
    : { ...base, ...checkedOperations(ticketStore(pool, table, timeoutMs, plan)) };
}

/** Leaf's DDL, column for column, so Leaf itself can keep using a table this store created. */
const leafTable = (table: string) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  biz_tag varchar(128) NOT NULL DEFAULT '',
  max_id bigint NOT NULL DEFAULT 1,
  step int NOT NULL,
  description varchar(256) DEFAULT NULL,
  update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
) ENGINE=InnoDB`;

/**
 * Creates a tag in leaf_alloc: a row at `max_id = after`, Leaf's `step` column set to the step
 * asked (the tag's minimum from then on). A row that holds less than `after` is raised to it
 * (its step kept); a row at or above `after` is refused with TagExistsError.
 *
 * Each outcome is decided by one statement, so concurrent calls cannot both succeed: the
 * primary key lets one INSERT through, and the UPDATE's `max_id < after` is evaluated under
 * the row lock. (One INSERT ... ON DUPLICATE KEY UPDATE cannot say which case happened: with
 * the CLIENT_FOUND_ROWS flag mysql2 sets, an insert and an unchanged row both count 1. A
 * transaction is no better: the S lock a duplicate INSERT leaves makes concurrent UPDATEs
 * deadlock.) The UPDATE's condition compares with what the row holds now, so an allocation
 * between the two statements is never undone.
 */
async function registerLeafTag(
  run: Run,
  table: string,
  tag: string,
  after: bigint,
  step: number,
  where: string,
): Promise<void> {
  for (;;) {
    try {
      await run(
        `INSERT INTO \`${table}\` (biz_tag, max_id, step, description) VALUES (?, CAST(? AS SIGNED), ?, ?)`,
        [tag, after.toString(), step, 'created by @ids/segment'],
      );
      return;
    } catch (error) {
      if (errnoOf(error) !== 1062) throw error; // 1062: the row exists
    }
    const raised = await run(
      `UPDATE \`${table}\` SET max_id = CAST(? AS SIGNED), update_time = CURRENT_TIMESTAMP
       WHERE biz_tag = ? AND max_id < CAST(? AS SIGNED)`,
      [after.toString(), tag, after.toString()],
    );
    if (affected(raised) === 1) return;
    const row = rowsOf(
      await run(`SELECT CAST(max_id AS CHAR) AS max_id FROM \`${table}\` WHERE biz_tag = ?`, [tag]),
    )[0];
    if (row) throw tagExists(where, storedMaxId(row.max_id, where), after);
    // The row was deleted between the statements: create it again.
  }
}

function leafStore(pool: MysqlPool, table: string, timeoutMs: number): CheckedOperations {
  const where = (tag: string) => `tag ${JSON.stringify(tag)} in mysql table ${table}`;
  const verify = once(() =>
    onConnection(pool, timeoutMs, `mysql table ${table}`, false, async (run) => {
      const columns = await columnsOf(run, table, `mysql table ${table}`);
      if (columns.size === 0) {
        throw new UnknownTagError(
          `mysql table ${table}: the table does not exist; register a tag first (createTag)`,
        );
      }
      checkColumns(
        columns,
        {
          biz_tag: { types: TEXT_TYPES, key: ['PRI'] },
          max_id: { types: ['bigint'] },
          step: { types: INTEGER_TYPES },
          update_time: { types: ['timestamp', 'datetime'] },
        },
        `mysql table ${table}`,
      );
    }),
  );
  return {
    async create(tag, after, step) {
      await onConnection(pool, timeoutMs, where(tag), false, (run) => run.text(leafTable(table)));
      await verify();
      await onConnection(pool, timeoutMs, where(tag), false, (run) =>
        registerLeafTag(run, table, tag, after, step, where(tag)),
      );
    },
    async take(tag, step) {
      await verify();
      const at = where(tag);
      // Leaf's own order (UPDATE, then SELECT, in one transaction): the UPDATE takes the row
      // lock, so the SELECT reads this transaction's max_id. The row's step is the minimum; the
      // guard leaves a row no range can be cut from untouched, and the SELECT says why.
      return onConnection(pool, timeoutMs, at, true, async (run) => {
        const updated = await run(
          `UPDATE \`${table}\`
           SET max_id = max_id + GREATEST(step, CAST(? AS SIGNED)), update_time = CURRENT_TIMESTAMP
           WHERE biz_tag = ? AND step > 0 AND max_id >= 0
             AND max_id <= CAST(? AS SIGNED) - GREATEST(step, CAST(? AS SIGNED))`,
          [step, tag, MAX_ID.toString(), step],
        );
        const row = rowsOf(
          await run(`SELECT CAST(max_id AS CHAR) AS max_id, step FROM \`${table}\` WHERE biz_tag = ?`, [tag]),
        )[0];
        if (!row) throw new UnknownTagError(`${at}: no such row; register the tag first (createTag)`);
        const rowStep = Number(row.step);
        if (!Number.isSafeInteger(rowStep) || rowStep < 1) {
          throw new StoreCorruptError(
            `${at}: expected step to be 1 or more (the tag's minimum step), the store holds ${received(row.step)}; nothing was issued from it`,
          );
        }
        const maxId = storedMaxId(row.max_id, at);
        const size = Math.max(rowStep, step);
        if (affected(updated) !== 1) {
          throw new StoreCorruptError(
            `${at}: max_id ${maxId} has no room for a step of ${size} below ${MAX_ID}; nothing was issued from it`,
          );
        }
        return rangeEndingAt(maxId, size, at);
      });
    },
  };
}

/** The design's ticket table: one row per name, its id from AUTO_INCREMENT. */
const ticketTable = (table: string) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  seq_id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
  seq_name varchar(64) NOT NULL,
  UNIQUE KEY seq_name (seq_name)
) ENGINE=InnoDB`;

const planTable = `CREATE TABLE IF NOT EXISTS ${PLAN_TABLE} (
  id tinyint NOT NULL PRIMARY KEY,
  servers int NOT NULL,
  server_offset int NOT NULL,
  created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB`;

/** Reads a server's auto_increment settings (as this connection sees them) and checks them against `plan`. */
function checkServer(row: Record<string, unknown> | undefined, plan: StepOffsetPlan, where: string): void {
  const increment = Number(row?.increment);
  const offset = Number(row?.server_offset);
  if (increment !== plan.servers || offset !== plan.offset) {
    throw new StepOffsetPlanError(
      `${where}: expected auto_increment_increment = ${plan.servers} and auto_increment_offset = ${plan.offset} (server ${plan.offset} of ${plan.servers}), the server has ${String(row?.increment)} and ${String(row?.server_offset)}; no ID was issued. Set them in the server's configuration`,
    );
  }
}

/** The plan row written on first use must be `plan`: else StepOffsetPlanError. */
function checkRecordedPlan(
  recorded: Record<string, unknown> | undefined,
  plan: StepOffsetPlan,
  table: string,
): void {
  if (Number(recorded?.servers) !== plan.servers || Number(recorded?.server_offset) !== plan.offset) {
    throw new StepOffsetPlanError(
      `mysql ticket table ${table}: this database was first used as server ${String(recorded?.server_offset)} of ${String(recorded?.servers)} (table ${PLAN_TABLE}); expected the same plan, received server ${plan.offset} of ${plan.servers}. Changing the number of servers collides with IDs already issued unless every server's counter is first moved past the highest ID of all; then update the plan row`,
    );
  }
}

/**
 * Checks `plan` against the server's auto_increment settings and the plan recorded in its
 * database, if any, by reads alone. Run before the store's first write (the ticket table, the
 * plan row): a refused first use leaves the database as it was, so the server's correct plan
 * is then taken, where a plan row written before the refusal would have refused it.
 */
async function checkPlanUnwritten(run: Run, table: string, plan: StepOffsetPlan): Promise<void> {
  const where = `mysql ticket table ${table}`;
  checkServer(
    rowsOf(
      await run('SELECT @@auto_increment_increment AS increment, @@auto_increment_offset AS server_offset'),
    )[0],
    plan,
    where,
  );
  const planned = rowsOf(
    await run(
      'SELECT 1 AS found FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [PLAN_TABLE],
    ),
  );
  if (planned.length === 0) return;
  const recorded = rowsOf(await run(`SELECT servers, server_offset FROM ${PLAN_TABLE} WHERE id = 1`))[0];
  if (recorded !== undefined) checkRecordedPlan(recorded, plan, table);
}

/**
 * Creates a tag in the ticket table: a row whose seq_id is `after`, so the table's counter
 * (which InnoDB moves past an explicit id) hands the tag `after + 1` or more. When the table
 * already holds an id at or above `after`, the counter is past it anyway and the row takes
 * its id from the counter (NULL), which cannot meet an id another session has just drawn. An
 * explicit id (a tag created above every id of the table) still can, if a concurrent REPLACE
 * drew exactly that id and has not written it yet: a narrow window this does not close.
 *
 * An existing tag is refused with TagExistsError, even below `after`: its IDs come from the
 * one AUTO_INCREMENT counter all tags of the table share, and moving that counter safely
 * takes either ALTER TABLE ... AUTO_INCREMENT (DDL, outside any transaction) or an explicit
 * id, which can meet an id a concurrent REPLACE has drawn but not yet written; that REPLACE
 * would then delete the tag's row. As with PostgreSQL's sequences, a ticket tag is never moved.
 */
async function registerTicketTag(
  run: Run,
  table: string,
  tag: string,
  after: bigint,
  where: string,
): Promise<void> {
  const refuse = async () => {
    const row = rowsOf(
      await run(`SELECT CAST(seq_id AS CHAR) AS seq_id FROM \`${table}\` WHERE seq_name = ?`, [tag]),
    )[0];
    if (!row) return;
    const held = storedMaxId(row.seq_id, where);
    throw new TagExistsError(
      `${where}: the tag exists (its last id is ${held}); expected a tag not yet created, received ${after}n. A ticket-table tag is never moved: its counter is the table's, shared by every tag`,
    );
  };
  for (;;) {
    // Looked up first: a failed INSERT would still take a value from the table's counter.
    await refuse();
    const inserted = await retryDeadlocks(where, 'the tag to be created', async () => {
      try {
        await run(
          `INSERT INTO \`${table}\` (seq_id, seq_name)
           SELECT IF(COALESCE(MAX(seq_id), 0) >= CAST(? AS SIGNED), NULL, CAST(? AS SIGNED)), ? FROM \`${table}\``,
          [after.toString(), after.toString(), tag],
        );
        return true;
      } catch (error) {
        // 1062 on seq_name: the tag was created meanwhile (refused on the next turn). 1062 on
        // seq_id: another tag took the same id at the same moment. Either looks again.
        if (errnoOf(error) === 1062) return false;
        throw error;
      }
    });
    if (inserted) return;
  }
}

function ticketStore(
  pool: MysqlPool,
  table: string,
  timeoutMs: number,
  plan: StepOffsetPlan | undefined,
): CheckedOperations {
  const where = (tag: string) => `tag ${JSON.stringify(tag)} in mysql ticket table ${table}`;
  const verify = once(() =>
    onConnection(pool, timeoutMs, `mysql ticket table ${table}`, false, async (run) => {
      const columns = await columnsOf(run, table, `mysql ticket table ${table}`);
      if (columns.size === 0) {
        throw new UnknownTagError(
          `mysql ticket table ${table}: the table does not exist; register a tag first (createTag)`,
        );
      }
      checkColumns(
        columns,
        {
          seq_id: { types: INTEGER_TYPES, extra: 'auto_increment' },
          // Without a unique key on seq_name, REPLACE INTO inserts a row per call instead of
          // replacing the tag's one: refused before the first write.
          seq_name: { types: TEXT_TYPES, key: ['UNI', 'PRI'] },
        },
        `mysql ticket table ${table}`,
      );
      if (!plan) return;
      // The plan is written to the database on first use, once checked; later, a server whose
      // settings (or whose store's plan) differ from it is refused: adding a server means a new
      // plan. Read again after the write: of two first uses at once with different plans, the
      // one whose row did not land is refused here.
      await checkPlanUnwritten(run, table, plan);
      await run.text(planTable);
      await run(
        `INSERT INTO ${PLAN_TABLE} (id, servers, server_offset) VALUES (1, ?, ?) ON DUPLICATE KEY UPDATE id = id`,
        [plan.servers, plan.offset],
      );
      checkRecordedPlan(
        rowsOf(await run(`SELECT servers, server_offset FROM ${PLAN_TABLE} WHERE id = 1`))[0],
        plan,
        table,
      );
    }),
  );
  return {
    async create(tag, after) {
      await onConnection(pool, timeoutMs, where(tag), false, async (run) => {
        if (plan) await checkPlanUnwritten(run, table, plan);
        await run.text(ticketTable(table));
      });
      await verify();
      await onConnection(pool, timeoutMs, where(tag), false, (run) =>
        registerTicketTag(run, table, tag, after, where(tag)),
      );
    },
    async take(tag) {
      await verify();
      const at = where(tag);
      // The design's statements, in one transaction. A tag without a row would be inserted by
      // REPLACE (one row affected instead of two): rolled back, so nothing is written.
      return retryDeadlocks(at, 'an allocation', () =>
        onConnection(pool, timeoutMs, at, true, async (run) => {
          const replaced = await run(`REPLACE INTO \`${table}\` (seq_name) VALUES (?)`, [tag]);
          if (affected(replaced) !== 2) {
            throw new UnknownTagError(`${at}: no such row; register the tag first (createTag)`);
          }
          const row = rowsOf(
            await run(
              'SELECT CAST(LAST_INSERT_ID() AS CHAR) AS id, @@auto_increment_increment AS increment, @@auto_increment_offset AS server_offset',
            ),
          )[0];
          // Checked on each connection: a pool may reach a server configured otherwise.
          if (plan) checkServer(row, plan, at);
          const id = storedMaxId(row?.id, at);
          if (id < 1n)
            throw new StoreCorruptError(`${at}: LAST_INSERT_ID() answered ${id}; expected 1 or more`);
          return { first: id, last: id };
        }),
      );
    },
  };
}
