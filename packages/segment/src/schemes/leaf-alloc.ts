// Leaf's scheme: one row per tag holding the highest ID handed out (`max_id`), moved up by a step
// per allocation, so every range is one statement (or, on MySQL, Leaf's own pair in one
// transaction). Two tables: ours on PostgreSQL/PGlite (tag, max_id, step, updated_at), and on
// MySQL Leaf's `leaf_alloc` exactly as Leaf creates it, so a Leaf database works unchanged.
import { MAX_ID } from '@ids/engine';
import { errorText, received } from '@ids/engine/internal';
import { type Dialect, once, type TransactionalDialect } from '../dialect.js';
import { StoreCorruptError, UnknownTagError } from '../errors.js';
import { checkTable, INTEGER_TYPES, TEXT_TYPES } from '../mysql-dialect.js';
import { type CheckedOperations, rangeEndingAt, storedMaxId, tagExists } from '../store.js';

/** A value PostgreSQL refused to compute with, as StoreCorruptError. */
export function corrupt(error: unknown, where: string): StoreCorruptError {
  return new StoreCorruptError(
    `${where}: expected max_id to be a bigint from 0 to ${MAX_ID} with room for the step; the store refused: ${errorText(error)}`,
    { cause: error },
  );
}

/**
 * The table scheme on PostgreSQL or PGlite: `UPDATE ... SET max_id = max_id + step ... RETURNING
 * max_id`, whose row lock makes concurrent callers queue rather than conflict. The table is
 * created on the first createTag.
 */
export function postgresLeafAlloc(db: Dialect, table: string): CheckedOperations {
  const ensureTable = once(() =>
    db.session(`${db.name} table ${table}`, async (run) => {
      try {
        await run(`CREATE TABLE IF NOT EXISTS ${table} (
          tag text PRIMARY KEY,
          max_id bigint NOT NULL,
          step integer NOT NULL,
          updated_at timestamptz NOT NULL DEFAULT now())`);
      } catch (error) {
        // Another session created it at the same moment: IF NOT EXISTS alone does not cover that.
        if (db.failure(error) !== 'exists') throw error;
      }
    }),
  );
  const where = (tag: string) => `tag ${JSON.stringify(tag)} in ${db.name} table ${table}`;
  return {
    async create(tag, after, step) {
      await ensureTable();
      await db.session(where(tag), async (run) => {
        // Insert, or raise a row that holds less; a row at or above `after` is left as it is
        // and answers nothing, so the refusal below reads what it holds.
        let inserted: number;
        try {
          inserted = (
            await run(
              `INSERT INTO ${table} AS t (tag, max_id, step) VALUES ($1, $2, $3)
               ON CONFLICT (tag) DO UPDATE SET max_id = EXCLUDED.max_id, updated_at = now()
               WHERE t.max_id < EXCLUDED.max_id RETURNING 1`,
              [tag, after.toString(), step],
            )
          ).rows.length;
        } catch (error) {
          if (db.failure(error) === 'corrupt') throw corrupt(error, where(tag));
          throw error;
        }
        if (inserted > 0) return;
        const held = await run(`SELECT max_id::text AS max_id FROM ${table} WHERE tag = $1`, [tag]);
        throw tagExists(where(tag), storedMaxId(held.rows[0]?.max_id, where(tag)), after);
      });
    },
    take(tag, step) {
      const at = where(tag);
      return db.session(at, async (run) => {
        let rows: Record<string, unknown>[];
        try {
          ({ rows } = await run(
            `UPDATE ${table} SET max_id = max_id + $2, step = $2, updated_at = now()
             WHERE tag = $1 RETURNING max_id::text AS max_id`,
            [tag, step],
          ));
        } catch (error) {
          const failure = db.failure(error);
          if (failure === 'missing')
            throw new UnknownTagError(
              `${at}: the table does not exist; create the tag first (createTag, ids segment create-tag)`,
              { cause: error },
            );
          if (failure === 'corrupt') throw corrupt(error, at);
          throw error;
        }
        const row = rows[0];
        if (!row)
          throw new UnknownTagError(
            `${at}: no such tag; create it once, above the highest ID it ever issued (createTag, ids segment create-tag)`,
          );
        return rangeEndingAt(storedMaxId(row.max_id, at), step, at);
      });
    },
  };
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
 * Leaf's `leaf_alloc` on MySQL or MariaDB. createTag inserts a row at `max_id = after`, Leaf's
 * `step` column set to the step asked (the tag's minimum from then on); a row that holds less
 * than `after` is raised to it (its step kept); a row at or above `after` is refused with
 * TagExistsError.
 *
 * Each outcome of createTag is decided by one statement, so concurrent calls cannot both
 * succeed: the primary key lets one INSERT through, and the UPDATE's `max_id < after` is
 * evaluated under the row lock. (One INSERT ... ON DUPLICATE KEY UPDATE cannot say which case
 * happened: with the CLIENT_FOUND_ROWS flag mysql2 sets, an insert and an unchanged row both
 * count 1. A transaction is no better: the S lock a duplicate INSERT leaves makes concurrent
 * UPDATEs deadlock.) The UPDATE's condition compares with what the row holds now, so an
 * allocation between the two statements is never undone.
 */
export function mysqlLeafAlloc(db: TransactionalDialect, table: string): CheckedOperations {
  const where = (tag: string) => `tag ${JSON.stringify(tag)} in mysql table ${table}`;
  const verify = once(() =>
    db.session(`mysql table ${table}`, (run) =>
      checkTable(
        run,
        table,
        {
          biz_tag: { types: TEXT_TYPES, key: ['PRI'] },
          max_id: { types: ['bigint'] },
          step: { types: INTEGER_TYPES },
          update_time: { types: ['timestamp', 'datetime'] },
        },
        `mysql table ${table}`,
      ),
    ),
  );
  return {
    async create(tag, after, step) {
      const at = where(tag);
      await db.session(at, (run) => run(leafTable(table)));
      await verify();
      await db.session(at, async (run) => {
        for (;;) {
          try {
            await run(
              `INSERT INTO \`${table}\` (biz_tag, max_id, step, description) VALUES (?, CAST(? AS SIGNED), ?, ?)`,
              [tag, after.toString(), step, 'created by @ids/segment'],
            );
            return;
          } catch (error) {
            if (db.failure(error) !== 'exists') throw error;
          }
          const raised = await run(
            `UPDATE \`${table}\` SET max_id = CAST(? AS SIGNED), update_time = CURRENT_TIMESTAMP
             WHERE biz_tag = ? AND max_id < CAST(? AS SIGNED)`,
            [after.toString(), tag, after.toString()],
          );
          if (raised.changed === 1) return;
          const row = (
            await run(`SELECT CAST(max_id AS CHAR) AS max_id FROM \`${table}\` WHERE biz_tag = ?`, [tag])
          ).rows[0];
          if (row) throw tagExists(at, storedMaxId(row.max_id, at), after);
          // The row was deleted between the statements: create it again.
        }
      });
    },
    async take(tag, step) {
      await verify();
      const at = where(tag);
      // Leaf's own order (UPDATE, then SELECT, in one transaction): the UPDATE takes the row
      // lock, so the SELECT reads this transaction's max_id. The row's step is the minimum; the
      // guard leaves a row no range can be cut from untouched, and the SELECT says why.
      return db.transaction(at, async (run) => {
        const updated = await run(
          `UPDATE \`${table}\`
           SET max_id = max_id + GREATEST(step, CAST(? AS SIGNED)), update_time = CURRENT_TIMESTAMP
           WHERE biz_tag = ? AND step > 0 AND max_id >= 0
             AND max_id <= CAST(? AS SIGNED) - GREATEST(step, CAST(? AS SIGNED))`,
          [step, tag, MAX_ID.toString(), step],
        );
        const row = (
          await run(`SELECT CAST(max_id AS CHAR) AS max_id, step FROM \`${table}\` WHERE biz_tag = ?`, [tag])
        ).rows[0];
        if (!row) throw new UnknownTagError(`${at}: no such row; register the tag first (createTag)`);
        const rowStep = Number(row.step);
        if (!Number.isSafeInteger(rowStep) || rowStep < 1) {
          throw new StoreCorruptError(
            `${at}: expected step to be 1 or more (the tag's minimum step), the store holds ${received(row.step)}; nothing was issued from it`,
          );
        }
        const maxId = storedMaxId(row.max_id, at);
        const size = Math.max(rowStep, step);
        if (updated.changed !== 1) {
          throw new StoreCorruptError(
            `${at}: max_id ${maxId} has no room for a step of ${size} below ${MAX_ID}; nothing was issued from it`,
          );
        }
        return rangeEndingAt(maxId, size, at);
      });
    },
  };
}
