// Step/offset: several databases share one tag's IDs with no coordination between them. Database
// `offset` of `servers` draws from a counter that starts at its place and steps by `servers`, so
// their series never meet. One vocabulary for every database: on MySQL the counter is the ticket
// table's AUTO_INCREMENT (the server's auto_increment_increment = servers and
// auto_increment_offset = offset); on PostgreSQL it is a sequence per tag whose every value is a
// block of `blockSize` IDs (sequences.ts).
import { checkInteger, received } from '@ids/engine/internal';
import type { Run } from '../dialect.js';
import { StepOffsetPlanError } from '../errors.js';

/** Step/offset: which of how many databases this one is (see the README's "Step/offset"). */
export interface StepOffsetPlan {
  /** How many databases share the IDs: the counter's step (MySQL's `auto_increment_increment`). 1 to 65,535. */
  readonly servers: number;
  /** This database's place, 1 to `servers`: its counter's offset (MySQL's `auto_increment_offset`). */
  readonly offset: number;
  /**
   * IDs per value of the counter. PostgreSQL's sequences: 1 to 2^31 - 1, required (the dynamic
   * step does not apply). MySQL's ticket table issues one ID per value: 1, or left out.
   */
  readonly blockSize?: number;
}

/** What the plan is checked against: whether the database hands out blocks (PostgreSQL) or single IDs (MySQL). */
type Blocks = 'required' | 'one';

/**
 * Checks a plan and returns it with `blockSize` filled in.
 * @throws StepOffsetPlanError for anything but an object of whole numbers in range, `offset`
 * within `servers`: the message says which field, what was expected and what was received.
 */
export function checkStepOffset(plan: unknown, blocks: Blocks): Required<StepOffsetPlan> {
  const refuse = (at: string, expected: string) => new StepOffsetPlanError(`${at}: ${expected}`);
  if (typeof plan !== 'object' || plan === null) {
    throw new StepOffsetPlanError(
      `stepOffset: expected { servers, offset${blocks === 'required' ? ', blockSize' : ''} }, received ${received(plan)}`,
    );
  }
  const { servers, offset, blockSize } = plan as Record<string, unknown>;
  const count = checkInteger(servers, 'stepOffset.servers', 1, 65_535, refuse);
  const place = checkInteger(offset, 'stepOffset.offset', 1, 65_535, refuse);
  if (place > count) {
    throw new StepOffsetPlanError(
      `stepOffset.offset: expected 1 to ${count} (one place per server), received ${place}: with step ${count} it would issue ${place}, ${place + count}, ..., which lie in the series of server ${((place - 1) % count) + 1}`,
    );
  }
  if (blocks === 'one') {
    if (blockSize !== undefined && blockSize !== 1) {
      throw new StepOffsetPlanError(
        `stepOffset.blockSize: expected 1 or none (the MySQL ticket table issues one ID per value), received ${received(blockSize)}`,
      );
    }
    return { servers: count, offset: place, blockSize: 1 };
  }
  return {
    servers: count,
    offset: place,
    blockSize: checkInteger(blockSize, 'stepOffset.blockSize', 1, 2 ** 31 - 1, refuse),
  };
}

/**
 * The refusal of an option of the old vocabulary: `sequence: { databases, index, blockSize }`
 * (PostgreSQL) was replaced by `stepOffset` before 1.0. Refused rather than ignored, since a store
 * that ignored it would run the table scheme and overlap the other databases' IDs.
 */
export function refuseOldPlan(options: object | undefined): void {
  if (options !== undefined && options !== null && 'sequence' in options) {
    throw new StepOffsetPlanError(
      `sequence: expected stepOffset: { servers, offset, blockSize } (offset from 1: the old index + 1, servers: the old databases), received ${received((options as { sequence: unknown }).sequence)}. The sequence option was renamed`,
    );
  }
}

/** MySQL's plan table: one row, written on first use. */
export const PLAN_TABLE = 'ids_step_offset_plan';

const planTable = `CREATE TABLE IF NOT EXISTS ${PLAN_TABLE} (
  id tinyint NOT NULL PRIMARY KEY,
  servers int NOT NULL,
  server_offset int NOT NULL,
  created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB`;

/** A server's auto_increment settings (as one connection sees them) checked against `plan`. */
export function checkServer(
  row: Record<string, unknown> | undefined,
  plan: StepOffsetPlan,
  where: string,
): void {
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
  where: string,
): void {
  if (Number(recorded?.servers) !== plan.servers || Number(recorded?.server_offset) !== plan.offset) {
    throw new StepOffsetPlanError(
      `${where}: this database was first used as server ${String(recorded?.server_offset)} of ${String(recorded?.servers)} (table ${PLAN_TABLE}); expected the same plan, received server ${plan.offset} of ${plan.servers}. Changing the number of servers collides with IDs already issued unless every server's counter is first moved past the highest ID of all; then update the plan row`,
    );
  }
}

/**
 * Checks `plan` against the server's auto_increment settings and the plan recorded in its
 * database, if any, by reads alone. Run before the store's first write (the ticket table, the
 * plan row): a refused first use leaves the database as it was, so the server's correct plan
 * is then taken, where a plan row written before the refusal would have refused it.
 */
export async function checkPlanUnwritten(run: Run, plan: StepOffsetPlan, where: string): Promise<void> {
  checkServer(
    (await run('SELECT @@auto_increment_increment AS increment, @@auto_increment_offset AS server_offset'))
      .rows[0],
    plan,
    where,
  );
  const planned = await run(
    'SELECT 1 AS found FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    [PLAN_TABLE],
  );
  if (planned.rows.length === 0) return;
  const recorded = (await run(`SELECT servers, server_offset FROM ${PLAN_TABLE} WHERE id = 1`)).rows[0];
  if (recorded !== undefined) checkRecordedPlan(recorded, plan, where);
}

/**
 * Writes the plan on first use, once checked; later, a server whose settings (or whose store's
 * plan) differ from it is refused: adding a server means a new plan. Read again after the write:
 * of two first uses at once with different plans, the one whose row did not land is refused here.
 */
export async function recordPlan(run: Run, plan: StepOffsetPlan, where: string): Promise<void> {
  await checkPlanUnwritten(run, plan, where);
  await run(planTable);
  await run(
    `INSERT INTO ${PLAN_TABLE} (id, servers, server_offset) VALUES (1, ?, ?) ON DUPLICATE KEY UPDATE id = id`,
    [plan.servers, plan.offset],
  );
  checkRecordedPlan(
    (await run(`SELECT servers, server_offset FROM ${PLAN_TABLE} WHERE id = 1`)).rows[0],
    plan,
    where,
  );
}
