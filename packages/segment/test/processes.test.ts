// Many processes drawing from one tag on a real PostgreSQL and a real Redis: all IDs distinct,
// a store killed mid-run, and 50 processes starting at once.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  hasPostgres,
  hasRedis,
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DrawJob, draw, scratch, strictlyIncreasing, union } from './helpers.js';

const tmp = scratch();
afterAll(() => tmp.remove());
let file = 0;
const out = () => join(tmp.dir, `ids-${file++}.bin`);

async function many(n: number, job: DrawJob) {
  const drawers = Array.from({ length: n }, () => draw(job, out()));
  return Promise.all(drawers.map((d) => d.done));
}

const kinds: { name: string; has: () => boolean; start: () => Promise<PostgresServer | RedisServer> }[] = [
  { name: 'PostgreSQL', has: hasPostgres, start: () => startPostgres() },
  { name: 'Redis', has: hasRedis, start: () => startRedis() },
];

for (const kind of kinds) {
  describe.skipIf(!kind.has())(`${kind.name}: many processes on one tag`, () => {
    let server: PostgresServer | RedisServer;
    beforeAll(async () => {
      server = await kind.start();
    });
    afterAll(async () => {
      await server?.close();
    });

    it('16 processes x 100,000 IDs from one tag: all distinct, each process strictly increasing', async () => {
      const results = await many(16, { store: server.url, tag: 'orders', count: 100_000, createTag: true });
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

    it('a conflict storm: 50 processes start at once on a fresh tag, register it and draw', async () => {
      const results = await many(50, {
        store: server.url,
        tag: 'storm',
        count: 2000,
        step: 100,
        createTag: true,
      });
      const { sorted, duplicates } = union(results.map((r) => r.ids));
      expect(duplicates).toEqual([]);
      expect(sorted.length).toBe(100_000);
      // Registered once: the smallest ID is 1, not a second registration's 1 after some were issued.
      expect(sorted[0]).toBe(1n);
      for (const { report } of results) expect(report.errors).toEqual({});
    });
  });
}

describe.skipIf(!hasPostgres())('PostgreSQL killed mid-run', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres({ allowExternal: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('no duplicate, no loss beyond the buffers and one segment per process, typed errors while both buffers are dry', async () => {
    const step = 500;
    const job: DrawJob = {
      store: server.url,
      tag: 'killed',
      step,
      fixedStep: true,
      createTag: true,
      paceEvery: 50,
    };
    const drawers = Array.from({ length: 6 }, () => draw(job, out()));
    await Promise.all(drawers.map((d) => d.started));
    await sleep(300);
    await server.kill();
    // Each process drains its two buffers (at most 1,000 IDs), then fails with
    // StoreUnavailableError until the server is back, and draws again once it is.
    await Promise.all(drawers.map((d) => d.saw('unavailable')));
    await server.start();
    await Promise.all(drawers.map((d) => d.saw('resumed')));
    for (const d of drawers) d.stop();
    const results = await Promise.all(drawers.map((d) => d.done));
    const { sorted, duplicates } = union(results.map((r) => r.ids));
    expect(duplicates).toEqual([]);
    for (const { ids } of results) expect(strictlyIncreasing(ids)).toBe(true);
    const dry = results.filter((r) => (r.report.errors.ERR_IDS_SEGMENT_STORE_UNAVAILABLE ?? 0) > 0);
    expect(dry.length).toBe(drawers.length);
    for (const { report } of results) {
      expect(Object.keys(report.errors).filter((c) => c !== 'ERR_IDS_SEGMENT_STORE_UNAVAILABLE')).toEqual([]);
    }
    // Allocated but never issued: what each process still held at its end, plus at most one
    // segment per process whose UPDATE committed while the connection died before the answer.
    const held = results.reduce((sum, r) => sum + BigInt(r.report.remaining), 0n);
    const missing = sorted[sorted.length - 1]! - sorted[0]! + 1n - BigInt(sorted.length);
    expect(missing).toBeLessThanOrEqual(held + BigInt(drawers.length * step));
    // Every process drew again after the restart: its last ID lies above what it held before.
    for (const { report } of results) expect(report.count).toBeGreaterThan(1000);
  });
});

describe.skipIf(!hasRedis())('Redis (no persistence) killed mid-run', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ allowExternal: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('after the restart the tag is gone: UnknownTagError, never the IDs from 1 again', async () => {
    const job: DrawJob = {
      store: server.url,
      tag: 'forgotten',
      step: 500,
      fixedStep: true,
      createTag: true,
      paceEvery: 50,
    };
    const drawers = Array.from({ length: 4 }, () => draw(job, out()));
    await Promise.all(drawers.map((d) => d.started));
    await sleep(300);
    await server.kill();
    // Down until one process has drained its buffers and been refused (the rest may still be
    // drawing from theirs).
    await Promise.any(drawers.map((d) => d.saw('unavailable')));
    await server.start();
    const results = await Promise.all(drawers.map((d) => d.done));
    const { duplicates } = union(results.map((r) => r.ids));
    expect(duplicates).toEqual([]);
    for (const { report } of results) {
      // Each process stopped on the typed error once Redis answered without the key.
      expect(report.lastError).toBe('ERR_IDS_SEGMENT_UNKNOWN_TAG');
    }
    expect(results.some((r) => (r.report.errors.ERR_IDS_SEGMENT_STORE_UNAVAILABLE ?? 0) > 0)).toBe(true);
  });
});
