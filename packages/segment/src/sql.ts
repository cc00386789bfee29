// PostgreSQL and PGlite as the schemes see them (dialect.ts), and the SQL store over them: the
// table scheme (schemes/leaf-alloc.ts), or step/offset sequences (schemes/sequences.ts).
import { IdsError, InvalidArgumentError, StoreUnavailableError } from '@ids/engine';
import { errorText, received } from '@ids/engine/internal';
import type { Dialect, Failure } from './dialect.js';
import { postgresLeafAlloc } from './schemes/leaf-alloc.js';
import { postgresSequences } from './schemes/sequences.js';
import { checkStepOffset, refuseOldPlan, type StepOffsetPlan } from './schemes/step-offset.js';
import { checkedOperations, type SegmentStore } from './store.js';

/**
 * The one method the SQL stores need from a client: `pg`'s Pool and Client and PGlite both fit,
 * so a user can pass their own.
 */
export interface SqlClient {
  /** Runs one statement with `$1`-style parameters and resolves with its rows. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A store on SQL: the segment store plus the client it runs on (for `sqlMachineId`). */
export interface SqlSegmentStore extends SegmentStore {
  /** The client this store queries; `close()` ends it only if the store opened it. */
  readonly sql: SqlClient;
}

/** Where a SQL store keeps its rows. */
export interface SqlStoreOptions {
  /** The leaf_alloc-style table (tag, max_id, step, updated_at). Default "leaf_alloc"; a plain lower-case identifier. */
  readonly table?: string;
  /**
   * Step/offset instead of the table: a sequence per tag on each of `servers` databases, this one
   * at `offset` (1 to servers), each value a block of `blockSize` IDs (required here).
   * StepOffsetPlanError for anything else.
   */
  readonly stepOffset?: StepOffsetPlan;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,47}$/;

/** @throws InvalidArgumentError unless `name` is a plain lower-case SQL identifier. */
export function checkIdentifier(name: unknown, what: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new InvalidArgumentError(
      `${what}: expected a lower-case SQL identifier (a-z, 0-9, _; up to 48), received ${received(name)}`,
    );
  }
  return name;
}

/** PostgreSQL's SQLSTATE of a failed statement, from pg and PGlite alike. */
function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * SQLSTATEs as a scheme reads them. 42P07 duplicate_table, 23505 unique_violation (on pg_type)
 * and 42710 duplicate_object (the table's row type, as newer servers report it): another session
 * created the same table or sequence at the same moment; IF NOT EXISTS alone does not cover that
 * race. 42P01 undefined_table (a sequence too). Values no arithmetic can use: 22P02 invalid
 * text, 22003 out of range (max_id + step past 2^63 - 1), 42883 no `+` for the column's type (a
 * text max_id), 42804 a mismatched type, 2200H a sequence past its maximum.
 */
const FAILURES: Record<string, Failure> = {
  '42P07': 'exists',
  '23505': 'exists',
  '42710': 'exists',
  '42P01': 'missing',
  '22P02': 'corrupt',
  '22003': 'corrupt',
  '42883': 'corrupt',
  '42804': 'corrupt',
  '2200H': 'corrupt',
};

/** Runs a CREATE ... IF NOT EXISTS that many processes may run at once. */
export async function createQuietly(sql: SqlClient, statement: string): Promise<void> {
  try {
    await sql.query(statement);
  } catch (error) {
    if (FAILURES[sqlState(error) ?? ''] !== 'exists') throw error;
  }
}

/**
 * PostgreSQL or PGlite on `client`. Every failure that is no answer of the server's (a
 * connection refused, reset or timed out, a closed pool) rejects as StoreUnavailableError, the
 * driver's error its cause: a store's callers get one error to act on whichever entry point met
 * it. An answer (an error with a SQLSTATE and a severity, from pg and PGlite alike) and this
 * package's own errors pass unchanged.
 */
export function postgresDialect(client: SqlClient, name: string): Dialect {
  const run = async (text: string, values?: readonly unknown[]) => {
    try {
      const result = (await client.query(text, values === undefined ? undefined : [...values])) as {
        rows: Record<string, unknown>[];
        rowCount?: number | null;
        affectedRows?: number;
      };
      return { rows: result.rows, changed: result.rowCount ?? result.affectedRows ?? 0 };
    } catch (error) {
      const severity = (error as { severity?: unknown } | null)?.severity;
      if (error instanceof IdsError || (sqlState(error) !== undefined && typeof severity === 'string')) {
        throw error;
      }
      throw new StoreUnavailableError(
        name,
        'segment',
        `expected the server to answer, received ${errorText(error)}`,
        { cause: error },
      );
    }
  };
  return {
    name,
    // Each statement of the PostgreSQL schemes stands alone, so any connection of the pool serves.
    session: (_where, body) => body(run),
    failure: (error) => FAILURES[sqlState(error) ?? ''],
  };
}

/**
 * A segment store on a leaf_alloc-style table: one row per tag, advanced in one statement
 * (`UPDATE ... SET max_id = max_id + step ... RETURNING max_id`), whose row lock makes
 * concurrent callers queue rather than conflict. With `stepOffset`, a sequence per tag instead.
 *
 * @throws InvalidArgumentError for a bad table name; StepOffsetPlanError for a bad plan, or for
 * the old `sequence` option.
 */
export function sqlSegmentStore(
  client: SqlClient,
  kind: string,
  options: SqlStoreOptions = {},
  close: () => Promise<void> = async () => {},
): SqlSegmentStore {
  const scheme = checkSqlStoreOptions(options);
  const db = postgresDialect(client, kind);
  if (scheme.plan) {
    return {
      kind: `${kind} sequence`,
      sql: client,
      ...checkedOperations(postgresSequences(db, scheme.plan)),
      close,
    };
  }
  return { kind, sql: client, ...checkedOperations(postgresLeafAlloc(db, scheme.table)), close };
}

/**
 * The scheme `options` choose, checked before a store opens anything.
 * @throws as sqlSegmentStore.
 */
export function checkSqlStoreOptions(options: SqlStoreOptions): {
  table: string;
  plan?: Required<StepOffsetPlan>;
} {
  refuseOldPlan(options);
  const table = checkIdentifier(options?.table ?? 'leaf_alloc', 'table');
  if (options?.stepOffset === undefined) return { table };
  return { table, plan: checkStepOffset(options.stepOffset, 'required') };
}
