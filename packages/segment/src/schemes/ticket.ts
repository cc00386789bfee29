// The design's ticket table on MySQL: one row per tag, each ID the table's AUTO_INCREMENT drawn by
// `REPLACE INTO ...; SELECT LAST_INSERT_ID()` (one ID per round trip). With a step/offset plan,
// the same table on each of several servers, their counters interleaved (step-offset.ts).
import { once, type Run, type TransactionalDialect } from '../dialect.js';
import { StoreCorruptError, TagExistsError, UnknownTagError } from '../errors.js';
import { checkTable, INTEGER_TYPES, retryDeadlocks, TEXT_TYPES } from '../mysql-dialect.js';
import { type CheckedOperations, storedMaxId } from '../store.js';
import { checkPlanUnwritten, checkServer, recordPlan, type StepOffsetPlan } from './step-offset.js';

/** The design's ticket table: one row per name, its id from AUTO_INCREMENT. */
const ticketTable = (table: string) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  seq_id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
  seq_name varchar(64) NOT NULL,
  UNIQUE KEY seq_name (seq_name)
) ENGINE=InnoDB`;

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
async function createTicketTag(
  db: TransactionalDialect,
  run: Run,
  table: string,
  tag: string,
  after: bigint,
  where: string,
): Promise<void> {
  const refuse = async () => {
    const row = (
      await run(`SELECT CAST(seq_id AS CHAR) AS seq_id FROM \`${table}\` WHERE seq_name = ?`, [tag])
    ).rows[0];
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
        // A duplicate on seq_name: the tag was created meanwhile (refused on the next turn). On
        // seq_id: another tag took the same id at the same moment. Either looks again.
        if (db.failure(error) === 'exists') return false;
        throw error;
      }
    });
    if (inserted) return;
  }
}

/** The ticket table `table`; with `plan`, this server's place among several (checked before any write). */
export function mysqlTicket(
  db: TransactionalDialect,
  table: string,
  plan: StepOffsetPlan | undefined,
): CheckedOperations {
  const named = `mysql ticket table ${table}`;
  const where = (tag: string) => `tag ${JSON.stringify(tag)} in ${named}`;
  const verify = once(() =>
    db.session(named, async (run) => {
      await checkTable(
        run,
        table,
        {
          seq_id: { types: INTEGER_TYPES, extra: 'auto_increment' },
          // Without a unique key on seq_name, REPLACE INTO inserts a row per call instead of
          // replacing the tag's one: refused before the first write.
          seq_name: { types: TEXT_TYPES, key: ['UNI', 'PRI'] },
        },
        named,
      );
      if (plan) await recordPlan(run, plan, named);
    }),
  );
  return {
    async create(tag, after) {
      await db.session(where(tag), async (run) => {
        if (plan) await checkPlanUnwritten(run, plan, named);
        await run(ticketTable(table));
      });
      await verify();
      await db.session(where(tag), (run) => createTicketTag(db, run, table, tag, after, where(tag)));
    },
    async take(tag) {
      await verify();
      const at = where(tag);
      // The design's statements, in one transaction. A tag without a row would be inserted by
      // REPLACE (one row affected instead of two): rolled back, so nothing is written.
      return retryDeadlocks(at, 'an allocation', () =>
        db.transaction(at, async (run) => {
          const replaced = await run(`REPLACE INTO \`${table}\` (seq_name) VALUES (?)`, [tag]);
          if (replaced.changed !== 2) {
            throw new UnknownTagError(`${at}: no such row; register the tag first (createTag)`);
          }
          const row = (
            await run(
              'SELECT CAST(LAST_INSERT_ID() AS CHAR) AS id, @@auto_increment_increment AS increment, @@auto_increment_offset AS server_offset',
            )
          ).rows[0];
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
