// MySQL and MariaDB as the schemes see them (dialect.ts): a mysql2 promise pool, its errors
// typed, deadlock victims retried, and the information_schema reads that check a table's shape.
import { IdsError, InvalidArgumentError, StoreUnavailableError } from '@ids/engine';
import { errorText } from '@ids/engine/internal';
import type { Outcome, Run, TransactionalDialect } from './dialect.js';
import { StoreSchemaError, UnknownTagError } from './errors.js';

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

/** How long a statement may take by default, in ms (a stopped server must not hang a caller). */
export const STATEMENT_TIMEOUT_MS = 5000;

/** MySQL's error number of a failed statement (mysql2 calls it errno). */
export function errnoOf(error: unknown): number | undefined {
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
export async function retryDeadlocks<T>(where: string, what: string, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!deadlockVictim(error)) throw error;
      if (n >= DEADLOCK_ATTEMPTS) {
        throw new StoreUnavailableError(
          'mysql',
          'segment',
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
function typedMysqlError(error: unknown, where: string, feature: StoreUnavailableError['feature']): unknown {
  if (error instanceof IdsError) return error;
  if (!serverAnswered(error)) {
    return new StoreUnavailableError(
      'mysql',
      feature,
      `${where}: expected the MySQL server to answer, received ${errorText(error)}`,
      { cause: error },
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

/** A driver's answer as an Outcome: rows of a read, affectedRows of a write. */
function outcomeOf(result: unknown): Outcome {
  return {
    rows: (Array.isArray(result) ? result : []) as Record<string, unknown>[],
    changed: Number((result as { affectedRows?: unknown })?.affectedRows ?? 0),
  };
}

/**
 * Runs `body` on one connection of the pool, inside a transaction when `transaction` is set
 * (committed when `body` resolves, rolled back when it throws). A connection whose statement
 * failed without a server answer (a dropped socket, a timeout) is destroyed, not returned.
 * A statement with parameters is prepared; one without goes over the text protocol, which
 * takes everything (transaction control, DDL).
 */
async function onConnection<T>(
  pool: MysqlPool,
  timeoutMs: number,
  where: string,
  transaction: boolean,
  feature: StoreUnavailableError['feature'],
  body: (run: Run) => Promise<T>,
): Promise<T> {
  let conn: MysqlConnection;
  try {
    conn = await pool.getConnection();
  } catch (error) {
    throw typedMysqlError(error, where, feature);
  }
  let broken = false;
  const run: Run = async (sql, values) => {
    try {
      const [result] =
        values === undefined
          ? await conn.query({ sql, timeout: timeoutMs })
          : await conn.execute({ sql, timeout: timeoutMs }, [...values]);
      return outcomeOf(result);
    } catch (error) {
      if (!serverAnswered(error)) broken = true;
      throw typedMysqlError(error, where, feature);
    }
  };
  try {
    if (!transaction) return await body(run);
    await run('START TRANSACTION');
    let result: T;
    try {
      result = await body(run);
    } catch (error) {
      if (!broken) await run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await run('COMMIT');
    return result;
  } finally {
    if (broken) conn.destroy();
    else conn.release();
  }
}

/**
 * MySQL (or MariaDB) on a mysql2 promise pool, each statement bounded by `timeoutMs`. `feature`
 * is what the pool serves (segments, or a database-assigned machine ID), for StoreUnavailableError.
 */
export function mysqlDialect(
  pool: MysqlPool,
  timeoutMs: number,
  feature: StoreUnavailableError['feature'],
): TransactionalDialect {
  return {
    name: 'mysql',
    session: (where, body) => onConnection(pool, timeoutMs, where, false, feature, body),
    transaction: (where, body) => onConnection(pool, timeoutMs, where, true, feature, body),
    // 1062: a duplicate key. A missing table (1146) is UnknownTagError already (typedMysqlError).
    failure: (error) => (errnoOf(error) === 1062 ? 'exists' : undefined),
  };
}

/** A column as information_schema describes it. */
interface Column {
  readonly type: string;
  readonly key: string;
  readonly extra: string;
}

/** What a column must be: one of `types`, with one of `key` (COLUMN_KEY) and `extra` when given. */
export interface ColumnRule {
  readonly types: readonly string[];
  readonly key?: readonly string[];
  readonly extra?: string;
}

export const INTEGER_TYPES = ['tinyint', 'smallint', 'mediumint', 'int', 'bigint'];
export const TEXT_TYPES = ['varchar', 'char'];

/** The columns of `table` in the connection's database; none when the table does not exist. */
async function columnsOf(run: Run, table: string, where: string): Promise<Map<string, Column>> {
  const { rows } = await run(
    `SELECT DATABASE() AS db, c.COLUMN_NAME AS name, c.DATA_TYPE AS type, c.COLUMN_KEY AS k, c.EXTRA AS extra
     FROM (SELECT 1) AS one LEFT JOIN information_schema.COLUMNS AS c
       ON c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = ?`,
    [table],
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

/**
 * Checks that `table` exists with each wanted column: UnknownTagError when it does not exist
 * (no tag was ever created), StoreSchemaError naming each column that is missing or of another
 * shape.
 */
export async function checkTable(
  run: Run,
  table: string,
  wanted: Record<string, ColumnRule>,
  where: string,
): Promise<void> {
  const columns = await columnsOf(run, table, where);
  if (columns.size === 0) {
    throw new UnknownTagError(`${where}: the table does not exist; register a tag first (createTag)`);
  }
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
