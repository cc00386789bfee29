import { IdsError, InvalidArgumentError } from '@ids/engine';
import { errorText, received } from '@ids/engine/internal';
import { StoreCorruptError, StoreUnavailableError, TagExistsError, UnknownTagError } from './errors.js';
import { checkStep } from './step.js';
import {
  checkedOperations,
  MAX_ID,
  rangeEndingAt,
  type SegmentStore,
  storedMaxId,
  tagExists,
} from './store.js';

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

/**
 * Step/offset: `databases` databases each hand out blocks of `blockSize` IDs, database `index`
 * the blocks index, index + databases, ... from a sequence `INCREMENT BY databases START index`,
 * so the databases never overlap and need no coordination between them. The block size is
 * fixed: the dynamic step does not apply.
 */
export interface SequenceScheme {
  /** How many databases share the tag: 1 to 1024. */
  readonly databases: number;
  /** This database's place among them: 0 to databases - 1. */
  readonly index: number;
  /** IDs per block (per segment): 1 to 2^31 - 1. */
  readonly blockSize: number;
}

/** Where a SQL store keeps its rows. */
export interface SqlStoreOptions {
  /** The leaf_alloc-style table (tag, max_id, step, updated_at). Default "leaf_alloc"; a plain lower-case identifier. */
  readonly table?: string;
  /** Use a sequence per tag (the step/offset scheme) instead of the table. Default: the table. */
  readonly sequence?: SequenceScheme;
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
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

// 42P07 duplicate_table, 23505 unique_violation (on pg_type) and 42710 duplicate_object (the
// table's row type, as newer servers report it): another session created the same table or
// sequence at the same moment; IF NOT EXISTS alone does not cover that race.
const CREATED_MEANWHILE = new Set(['42P07', '23505', '42710']);

/** Runs a CREATE ... IF NOT EXISTS that many processes may run at once. */
export async function createQuietly(sql: SqlClient, statement: string): Promise<void> {
  try {
    await sql.query(statement);
  } catch (error) {
    if (!CREATED_MEANWHILE.has(sqlState(error) ?? '')) throw error;
  }
}

/**
 * The client with every failure that is no answer of the server's (a connection refused, reset
 * or timed out, a closed pool) rejected as StoreUnavailableError, the driver's error its cause:
 * a store's callers get one error to act on whichever entry point met it, where they got the
 * socket's own error from createTag and allocate. An answer (an error with a SQLSTATE and a
 * severity, from pg and PGlite alike) and this package's own errors pass unchanged.
 */
function answering(client: SqlClient, kind: string): SqlClient {
  return {
    async query(text, values) {
      try {
        return await client.query(text, values);
      } catch (error) {
        const severity = (error as { severity?: unknown } | null)?.severity;
        if (error instanceof IdsError || (sqlState(error) !== undefined && typeof severity === 'string')) {
          throw error;
        }
        throw new StoreUnavailableError(
          `${kind}: expected the server to answer, received ${errorText(error)}`,
          {
            cause: error,
          },
        );
      }
    },
  };
}

// Values the store holds that no arithmetic can use: 22P02 invalid text, 22003 out of range
// (max_id + step past 2^63 - 1), 42883 no `+` for the column's type (a text max_id).
const CORRUPT = new Set(['22P02', '22003', '42883', '42804']);

function corrupt(error: unknown, where: string): StoreCorruptError {
  const reason = errorText(error);
  return new StoreCorruptError(
    `${where}: expected max_id to be a bigint from 0 to ${MAX_ID} with room for the step; the store refused: ${reason}`,
    { cause: error },
  );
}

function firstRow(rows: unknown[]): Record<string, unknown> | undefined {
  return rows[0] as Record<string, unknown> | undefined;
}

/**
 * A segment store on a leaf_alloc-style table: one row per tag, advanced in one statement
 * (`UPDATE ... SET max_id = max_id + step ... RETURNING max_id`), whose row lock makes
 * concurrent callers queue rather than conflict. With `sequence`, the step/offset scheme instead.
 *
 * @throws InvalidArgumentError for a bad table name or sequence scheme.
 */
export function sqlSegmentStore(
  client: SqlClient,
  kind: string,
  options: SqlStoreOptions = {},
  close: () => Promise<void> = async () => {},
): SqlSegmentStore {
  const sql = answering(client, kind);
  if (options.sequence !== undefined) {
    return { ...sequenceStore(sql, kind, checkScheme(options.sequence), close), sql: client };
  }
  const table = checkIdentifier(options.table ?? 'leaf_alloc', 'table');
  let ready: Promise<void> | undefined;
  const ensureTable = () => {
    ready ??= createQuietly(
      sql,
      `CREATE TABLE IF NOT EXISTS ${table} (
        tag text PRIMARY KEY,
        max_id bigint NOT NULL,
        step integer NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now())`,
    ).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  return {
    kind,
    sql: client,
    ...checkedOperations({
      async create(tag, after, step) {
        const where = `tag ${JSON.stringify(tag)} in ${kind} table ${table}`;
        await ensureTable();
        // Insert, or raise a row that holds less; a row at or above `after` is left as it is
        // and answers nothing, so the refusal below reads what it holds.
        let rows: unknown[];
        try {
          ({ rows } = await sql.query(
            `INSERT INTO ${table} AS t (tag, max_id, step) VALUES ($1, $2, $3)
           ON CONFLICT (tag) DO UPDATE SET max_id = EXCLUDED.max_id, updated_at = now()
           WHERE t.max_id < EXCLUDED.max_id RETURNING 1`,
            [tag, after.toString(), step],
          ));
        } catch (error) {
          if (CORRUPT.has(sqlState(error) ?? '')) throw corrupt(error, where);
          throw error;
        }
        if (rows.length > 0) return;
        const held = await sql.query(`SELECT max_id::text AS max_id FROM ${table} WHERE tag = $1`, [tag]);
        throw tagExists(where, storedMaxId(firstRow(held.rows)?.max_id, where), after);
      },
      async take(tag, step) {
        const where = `tag ${JSON.stringify(tag)} in ${kind} table ${table}`;
        let rows: unknown[];
        try {
          ({ rows } = await sql.query(
            `UPDATE ${table} SET max_id = max_id + $2, step = $2, updated_at = now()
           WHERE tag = $1 RETURNING max_id::text AS max_id`,
            [tag, step],
          ));
        } catch (error) {
          const state = sqlState(error);
          if (state === '42P01')
            throw new UnknownTagError(
              `${where}: the table does not exist; create the tag first (createTag, ids segment create-tag)`,
              { cause: error },
            );
          if (CORRUPT.has(state ?? '')) throw corrupt(error, where);
          throw error;
        }
        const row = firstRow(rows);
        if (!row)
          throw new UnknownTagError(
            `${where}: no such tag; create it once, above the highest ID it ever issued (createTag, ids segment create-tag)`,
          );
        return rangeEndingAt(storedMaxId(row.max_id, where), step, where);
      },
    }),
    close,
  };
}

function checkScheme(scheme: SequenceScheme): SequenceScheme {
  if (typeof scheme !== 'object' || scheme === null) {
    throw new InvalidArgumentError(
      `sequence: expected { databases, index, blockSize }, received ${received(scheme)}`,
    );
  }
  const databases = checkStep(scheme.databases, 'sequence.databases', 1, 1024);
  const index = checkStep(scheme.index, 'sequence.index', 0, databases - 1);
  const blockSize = checkStep(scheme.blockSize, 'sequence.blockSize', 1, 2 ** 31 - 1);
  return { databases, index, blockSize };
}

/** The sequence of a tag: quoted, since tags keep their case and may hold '.' and '-'. */
const sequenceName = (tag: string) => `"ids_seg_${tag}"`;

function sequenceStore(
  sql: SqlClient,
  kind: string,
  { databases, index, blockSize }: SequenceScheme,
  close: () => Promise<void>,
): Omit<SqlSegmentStore, 'sql'> {
  const block = BigInt(blockSize);
  return {
    kind: `${kind} sequence`,
    ...checkedOperations({
      async create(tag, after) {
        // The first block of this database that lies wholly above `after`.
        const lowest = (after + block - 1n) / block;
        const n = BigInt(databases);
        const k = BigInt(index);
        const start = lowest <= k ? k : k + ((lowest - k + n - 1n) / n) * n;
        try {
          await sql.query(
            `CREATE SEQUENCE ${sequenceName(tag)} AS bigint INCREMENT BY ${databases} MINVALUE 0 START ${start}`,
          );
        } catch (error) {
          // A sequence is not raised in place (its blocks interleave with other databases'):
          // an existing one, or one created at the same moment, is refused.
          if (!CREATED_MEANWHILE.has(sqlState(error) ?? '')) throw error;
          throw new TagExistsError(
            `tag ${JSON.stringify(tag)} in ${kind} sequence ${sequenceName(tag)}: the sequence exists; expected a tag not yet created, received one that is. A sequence tag is never moved`,
            { cause: error },
          );
        }
      },
      async take(tag) {
        const where = `tag ${JSON.stringify(tag)} in ${kind} sequence ${sequenceName(tag)}`;
        let rows: unknown[];
        try {
          ({ rows } = await sql.query('SELECT nextval($1::regclass)::text AS block', [sequenceName(tag)]));
        } catch (error) {
          const state = sqlState(error);
          if (state === '42P01')
            throw new UnknownTagError(
              `${where}: no such sequence; create the tag first (createTag, ids segment create-tag)`,
              {
                cause: error,
              },
            );
          if (CORRUPT.has(state ?? '') || state === '2200H') throw corrupt(error, where);
          throw error;
        }
        const b = storedMaxId(firstRow(rows)?.block, where);
        const last = (b + 1n) * block;
        if (last > MAX_ID)
          throw new StoreCorruptError(`${where}: block ${b} of ${blockSize} IDs ends past ${MAX_ID}`);
        return { first: b * block + 1n, last };
      },
    }),
    close,
  };
}
