// Step/offset has one vocabulary on every database, { servers, offset (from 1), blockSize }, and
// one error, StepOffsetPlanError: the same bad plan is refused the same way by PostgreSQL/PGlite
// and MySQL, before anything is opened. The old PostgreSQL option `sequence: { databases, index }`
// is refused with a pointer to the new one, never ignored (ignored, it would run the table scheme
// and overlap the other databases' IDs).
import { describe, expect, it } from 'vitest';
import {
  type MysqlPool,
  mysqlStore,
  pgliteStore,
  StepOffsetPlanError,
  sqlSegmentStore,
} from '../src/index.js';

// Never reached: every plan below is refused before a statement is run.
const pool: MysqlPool = {
  getConnection: () => Promise.reject(new Error('no statement expected')),
};
const client = { query: () => Promise.reject(new Error('no statement expected')) };

const stores = {
  postgres: async (stepOffset: unknown) => sqlSegmentStore(client, 'postgres', { stepOffset } as never),
  pglite: (stepOffset: unknown) => pgliteStore({ stepOffset } as never),
  mysql: (stepOffset: unknown) => mysqlStore({ client: pool, stepOffset } as never),
};

describe.each(Object.entries(stores))('%s: one plan vocabulary, one error', (_name, open) => {
  it.each([
    ['not an object', 3, /stepOffset: expected \{ servers, offset/],
    [
      'servers 0',
      { servers: 0, offset: 1, blockSize: 10 },
      /stepOffset\.servers: expected an integer from 1 to 65535, received 0/,
    ],
    [
      'offset 0 (places count from 1)',
      { servers: 2, offset: 0, blockSize: 10 },
      /stepOffset\.offset: expected an integer from 1 to 65535, received 0/,
    ],
    [
      'offset past servers',
      { servers: 2, offset: 3, blockSize: 10 },
      /stepOffset\.offset: expected 1 to 2 \(one place per server\), received 3/,
    ],
    [
      'offset as text',
      { servers: 2, offset: '1', blockSize: 10 },
      /stepOffset\.offset: .*received "1" \(string\)/,
    ],
  ])('%s: StepOffsetPlanError', async (_case, plan, message) => {
    const error = await open(plan).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepOffsetPlanError);
    expect((error as StepOffsetPlanError).code).toBe('ERR_IDS_SEGMENT_STEP_OFFSET_PLAN');
    expect((error as Error).message).toMatch(message);
  });
});

describe('what differs between databases, in the same vocabulary', () => {
  it('PostgreSQL needs blockSize (a sequence value is a block); MySQL takes 1 or none (one ID per value)', async () => {
    const noBlock = await stores.pglite({ servers: 2, offset: 1 }).catch((e: unknown) => e);
    expect(noBlock).toBeInstanceOf(StepOffsetPlanError);
    expect((noBlock as Error).message).toMatch(
      /stepOffset\.blockSize: expected an integer from 1 to 2147483647, received undefined/,
    );
    const blocks = await stores.mysql({ servers: 2, offset: 1, blockSize: 10 }).catch((e: unknown) => e);
    expect(blocks).toBeInstanceOf(StepOffsetPlanError);
    expect((blocks as Error).message).toMatch(/stepOffset\.blockSize: expected 1 or none/);
    const store = await stores.mysql({ servers: 2, offset: 2, blockSize: 1 });
    expect(store.kind).toBe('mysql step/offset');
  });

  it('the old `sequence: { databases, index }` is refused with a pointer to stepOffset', async () => {
    for (const open of [
      () => pgliteStore({ sequence: { databases: 2, index: 0, blockSize: 10 } } as never),
      async () =>
        sqlSegmentStore(client, 'postgres', { sequence: { databases: 2, index: 0, blockSize: 10 } } as never),
    ]) {
      const error = await open().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StepOffsetPlanError);
      expect((error as Error).message).toMatch(
        /^sequence: expected stepOffset: \{ servers, offset, blockSize \} \(offset from 1: the old index \+ 1/,
      );
    }
  });
});
