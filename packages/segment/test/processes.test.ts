// Many processes drawing from one tag on a real PostgreSQL and a real Redis: all IDs distinct,
// a store killed mid-run (PostgreSQL, and MySQL on Leaf's leaf_alloc), and 50 processes
// starting at once.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasRedis, serverForSuite, startRedis, storeServers } from '@ids/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { openSegmentStore } from '../src/index.js';
import { type DrawJob, draw, scratch, strictlyIncreasing, union } from './helpers.js';

const tmp = scratch();
afterAll(() => tmp.remove());
let file = 0;
const out = () => join(tmp.dir, `ids-${file++}.bin`);

/** Creates `tag` in the store at `url`, first ID 1: the operator's one explicit act. */
async function create(url: string, tag: string) {
  const store = await openSegmentStore(url);
  try {
    await store.createTag(tag, { after: 0n });
  } finally {
    await store.close();
  }
}

/**
 * Creates the job's tag, starts `processes` drawing from it, lets them draw a moment once all
 * have started, then kills the server (a crash, no clean shutdown): the drawers, still running.
 */
async function drawThenKill(
  server: { url: string; kill(): Promise<unknown> },
  job: DrawJob,
  processes: number,
) {
  await create(server.url, job.tag);
  const drawers = Array.from({ length: processes }, () => draw(job, out()));
  await Promise.all(drawers.map((d) => d.started));
  await sleep(300);
  await server.kill();
  return drawers;
}

async function many(n: number, job: DrawJob) {
  const drawers = Array.from({ length: n }, () => draw(job, out()));
  return Promise.all(drawers.map((d) => d.done));
}

for (const kind of Object.values(storeServers)) {
  describe.skipIf(!kind.has())(`${kind.name}: many processes on one tag`, () => {
    const suite = serverForSuite(() => kind.start());

    it('16 processes x 100,000 IDs from one tag: all distinct, each process strictly increasing', async () => {
      await create(suite.server.url, 'orders');
      const results = await many(16, { store: suite.server.url, tag: 'orders', count: 100_000 });
      for (const { ids, report } of results) {
        expect(report.count).toBe(100_000);
        expect(strictlyIncreasing(ids)).toBe(true);
      }
      const { sorted, duplicates } = union(results.map((r) => r.ids));
      expect(duplicates).toEqual([]);
      expect(sorted.length).toBe(1_600_000);
      expect(sorted[0]).toBeGreaterThanOrEqual(1n);
      // Every ID allocated is issued or still held by the process that ended: none lost unaccounted.
      const held = results.reduce((sum, r) => sum + BigInt(r.report.remaining), 0n);
      expect(sorted[sorted.length - 1]! - sorted[0]! + 1n - BigInt(sorted.length)).toBeLessThanOrEqual(held);
    });

    it('a conflict storm: 50 processes start at once on a fresh tag and draw', async () => {
      await create(suite.server.url, 'storm');
      const results = await many(50, {
        store: suite.server.url,
        tag: 'storm',
        count: 2000,
        step: 100,
      });
      const { sorted, duplicates } = union(results.map((r) => r.ids));
      expect(duplicates).toEqual([]);
      expect(sorted.length).toBe(100_000);
      // The first row lock is contended by 50: the smallest ID is 1, every ID once.
      expect(sorted[0]).toBe(1n);
      // The messages say what an outage was, should one come (a timeout on a loaded machine, or
      // deadlock retries running out).
      for (const { report } of results) expect(report.errors, JSON.stringify(report.messages)).toEqual({});
    });
  });
}

// The same run on each SQL store: the server is killed (a crash, no clean shutdown) while 5
// processes x 2 generators draw from one tag, and started again on the same data.
for (const kind of [storeServers.postgres, storeServers.mariadb]) {
  describe.skipIf(!kind.has())(`${kind.name} killed mid-run`, () => {
    const suite = serverForSuite(() => kind.start({ allowExternal: false }));

    it('no duplicate, no loss beyond the buffers and one segment per generator, typed errors while both buffers are dry', async () => {
      const step = 500;
      const generators = 2;
      const job: DrawJob = {
        store: suite.server.url,
        tag: 'killed',
        step,
        fixedStep: true,
        paceEvery: 50,
        generators,
      };
      const drawers = await drawThenKill(suite.server, job, 5);
      // Each generator drains its two buffers (at most 1,000 IDs), then fails with
      // StoreUnavailableError until the server is back, and draws again once it is: each process
      // says when all its generators got there (no guess of how long a busy machine takes).
      await Promise.all(drawers.map((d) => d.saw('unavailable')));
      await suite.server.start();
      await Promise.all(drawers.map((d) => d.saw('resumed')));
      for (const d of drawers) d.stop();
      const results = await Promise.all(drawers.map((d) => d.done));
      const { sorted, duplicates } = union(results.map((r) => r.ids));
      expect(duplicates).toEqual([]);
      for (const { lists } of results) {
        expect(lists.length).toBe(generators);
        for (const ids of lists) expect(strictlyIncreasing(ids)).toBe(true);
      }
      const dry = results.filter((r) => (r.report.errors.ERR_IDS_STORE_UNAVAILABLE ?? 0) > 0);
      expect(dry.length).toBe(drawers.length);
      for (const { report } of results) {
        expect(Object.keys(report.errors).filter((c) => c !== 'ERR_IDS_STORE_UNAVAILABLE')).toEqual([]);
      }
      // Allocated but never issued: what each process still held at its end, plus at most one
      // segment per generator whose UPDATE committed while the connection died before the answer.
      const held = results.reduce((sum, r) => sum + BigInt(r.report.remaining), 0n);
      const missing = sorted[sorted.length - 1]! - sorted[0]! + 1n - BigInt(sorted.length);
      expect(missing).toBeLessThanOrEqual(held + BigInt(drawers.length * generators * step));
      // Every generator drew again after the restart: more than the two segments it could hold before.
      for (const { lists } of results) for (const ids of lists) expect(ids.length).toBeGreaterThan(2 * step);
    });
  });
}

describe.skipIf(!hasRedis())('Redis (no persistence) killed mid-run', () => {
  const suite = serverForSuite(() => startRedis({ allowExternal: false }));

  it('after the restart the tag is gone: UnknownTagError, never the IDs from 1 again', async () => {
    const job: DrawJob = {
      store: suite.server.url,
      tag: 'forgotten',
      step: 500,
      fixedStep: true,
      paceEvery: 50,
    };
    const drawers = await drawThenKill(suite.server, job, 4);
    // Down until one process has drained its buffers and been refused (the rest may still be
    // drawing from theirs).
    await Promise.any(drawers.map((d) => d.saw('unavailable')));
    await suite.server.start();
    const results = await Promise.all(drawers.map((d) => d.done));
    const { duplicates } = union(results.map((r) => r.ids));
    expect(duplicates).toEqual([]);
    for (const { report } of results) {
      // Each process stopped on the typed error once Redis answered without the key.
      expect(report.lastError).toBe('ERR_IDS_SEGMENT_UNKNOWN_TAG');
    }
    expect(results.some((r) => (r.report.errors.ERR_IDS_STORE_UNAVAILABLE ?? 0) > 0)).toBe(true);
  });
});
