// The seam between a scheme (how IDs are drawn from tables, counters or sequences) and a database
// (how a statement reaches it, and what its errors mean). PostgreSQL/PGlite (sql.ts) and MySQL
// (mysql-dialect.ts) each implement it once; each scheme in schemes/ is written against it, so a
// scheme never reads a driver's error fields and a dialect never knows a table.

/** A statement's parameter. */
export type SqlValue = string | number | null;

/** What one statement answered: its rows (none for a write) and how many rows it changed. */
export interface Outcome {
  readonly rows: Record<string, unknown>[];
  readonly changed: number;
}

/** Runs one statement on the session's connection (`$1` parameters on PostgreSQL, `?` on MySQL). */
export type Run = (sql: string, values?: readonly SqlValue[]) => Promise<Outcome>;

/** What a server's refusal of a statement means to a scheme; undefined: anything else (passed on as is). */
export type Failure =
  /** The row, table or sequence being created is there already (made meanwhile by another session). */
  | 'exists'
  /** The table or sequence does not exist. */
  | 'missing'
  /** A stored value no arithmetic can use (not a number, out of range, no room for the step). */
  | 'corrupt';

/** A database as the schemes see it. */
export interface Dialect {
  /** "postgres", "pglite" or "mysql": the store's kind, and how messages name the database. */
  readonly name: string;
  /**
   * Runs `body` with statements on one connection. A statement the server did not answer (a
   * connection refused, reset or timed out) rejects with StoreUnavailableError; an answer that
   * says the configuration is wrong (no such database, a refused user) with InvalidArgumentError.
   */
  session<T>(where: string, body: (run: Run) => Promise<T>): Promise<T>;
  /** What `error`, a statement's refusal, means to a scheme. */
  failure(error: unknown): Failure | undefined;
}

/** A dialect whose statements can share a transaction (MySQL's schemes need one; PostgreSQL's are single statements). */
export interface TransactionalDialect extends Dialect {
  /** `session` inside a transaction: committed when `body` resolves, rolled back when it throws. */
  transaction<T>(where: string, body: (run: Run) => Promise<T>): Promise<T>;
}

/**
 * Runs `check` once and keeps its success; a failure is forgotten, so the next call checks
 * again (a table created meanwhile, a server back).
 */
export function once(check: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= check().catch((error: unknown) => {
      done = undefined;
      throw error;
    });
    return done;
  };
}
