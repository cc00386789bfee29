// Segments on the embedded PGlite store: the double buffer, the dynamic step on a fake clock,
// a store that fails or is slow (faults injected by wrapping the real store), and bad input.
import { FakeClock, InvalidArgumentError, MAX_ID } from '@ids/engine';
import { gate } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BufferEmptyError,
  InvalidTagError,
  nextStep,
  pgliteStore,
  type SegmentStore,
  Segments,
  SegmentsClosedError,
  type SegmentsOptions,
  type SqlSegmentStore,
  StepOutOfRangeError,
  StoreCorruptError,
  StoreUnavailableError,
  StoreWentBackwardsError,
  TagExistsError,
  UnknownTagError,
} from '../src/index.js';

let store: SqlSegmentStore;
beforeAll(async () => {
  store = await pgliteStore();
}, 180_000);
afterAll(async () => {
  await store?.close();
});

/** The real store with a seam: calls recorded, and a switch that makes it fail or hold. */
function faulty(real: SegmentStore) {
  const calls: { step: number; issuedBefore?: number }[] = [];
  let inFlight = 0;
  const state = {
    down: false,
    hold: undefined as Promise<void> | undefined,
    maxInFlight: 0,
    calls,
  };
  const store: SegmentStore = {
    kind: 'faulty',
    createTag: (tag, options) => real.createTag(tag, options),
    async allocate(tag, step) {
      calls.push({ step });
      inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      try {
        if (state.hold) await state.hold;
        if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return await real.allocate(tag, step);
      } finally {
        inFlight -= 1;
      }
    },
    close: async () => {},
  };
  return { store, state };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
let tags = 0;
const freshTag = () => `t${tags++}`;
/** A new tag, created in `on` (the one explicit create) with its first ID 1. */
async function createdTag(on: SegmentStore = store): Promise<string> {
  const tag = freshTag();
  await on.createTag(tag, { after: 0n });
  return tag;
}
/** Segments on a new tag of `on`, the step fixed at `step` unless `options` says otherwise. */
const onFreshTag = async (on: SegmentStore, step: number, options: Partial<SegmentsOptions> = {}) =>
  Segments.create({ store: on, tag: await createdTag(on), step, maxStep: step, ...options });

describe('the double buffer', () => {
  it('fetches the next segment once 10% of the current is used, and serves both from memory', async () => {
    const { store: s, state } = faulty(store);
    const segments = await onFreshTag(s, 100);
    expect(state.calls.length).toBe(1);
    expect(segments.stats).toMatchObject({ step: 100, roundTrips: 1, switches: 0, remaining: 100n });
    for (let i = 1; i <= 10; i++) expect(segments.nextIdSync()).toBe(BigInt(i));
    expect(state.calls.length).toBe(1);
    expect(segments.nextIdSync()).toBe(11n); // the 11th ID: 10% used, the fetch starts
    expect(state.calls.length).toBe(2);
    await turn();
    await turn();
    // The rest of the first segment and the whole second one, from memory, no wait.
    for (let i = 12; i <= 200; i++) expect(segments.nextIdSync()).toBe(BigInt(i));
    expect(state.calls.length).toBe(3);
    // 101 took the first segment's place; 200 is the last of the second, so no second switch yet.
    expect(segments.stats.switches).toBe(1);
    await turn();
    await turn();
    expect(segments.nextIdSync()).toBe(201n);
    expect(segments.stats.switches).toBe(2);
    await segments.close();
  });

  it('a steady stream through 100 segments never finds the buffer empty', async () => {
    const { store: s, state } = faulty(store);
    const segments = await onFreshTag(s, 100);
    let last = 0n;
    for (let i = 0; i < 10_000; i++) {
      const id = segments.nextIdSync(); // throws BufferEmptyError if the prefetch had not landed
      expect(id).toBeGreaterThan(last);
      last = id;
      // A caller that lets the event loop turn now and then, as any service does.
      if (i % 20 === 19) await turn();
    }
    expect(last).toBe(10_000n);
    expect(state.maxInFlight).toBe(1);
    await segments.close();
  });

  it('20,000 concurrent nextId() calls get 20,000 distinct IDs, 1 to 20,000', async () => {
    const segments = await onFreshTag(store, 100);
    const ids = await Promise.all(Array.from({ length: 20_000 }, () => segments.nextId()));
    const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(new Set(ids).size).toBe(20_000);
    expect(sorted[0]).toBe(1n);
    expect(sorted.at(-1)).toBe(20_000n);
    await segments.close();
  });

  it('nextIds returns increasing IDs across segments', async () => {
    const segments = await onFreshTag(store, 7);
    const ids = await segments.nextIds(100);
    expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => BigInt(i + 1)));
    await expect(segments.nextIds(0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(segments.nextIds(1.5)).rejects.toBeInstanceOf(InvalidArgumentError);
    await segments.close();
  });
});

describe('a store that cannot answer', () => {
  it('issues every ID of both buffers, then StoreUnavailableError (and BufferEmptyError from nextIdSync); recovers without a duplicate', async () => {
    const { store: s, state } = faulty(store);
    const segments = await onFreshTag(s, 100);
    for (let i = 1; i <= 11; i++) await segments.nextId();
    await turn();
    await turn(); // the second segment (101-200) has landed
    state.down = true;
    const issued: bigint[] = [];
    for (let i = 12; i <= 200; i++) issued.push(await segments.nextId());
    expect(issued.at(-1)).toBe(200n);
    const error = await segments.nextId().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('ERR_IDS_STORE_UNAVAILABLE');
    // A store of the user's that threw its client's error: named by its kind.
    expect(error).toMatchObject({ store: 'faulty', feature: 'segment' });
    expect((error as Error).message).toMatch(/^faulty: tag /);
    expect(((error as Error).cause as Error).message).toMatch(/ECONNREFUSED/);
    expect(() => segments.nextIdSync()).toThrow(BufferEmptyError);
    await turn();
    await expect(segments.nextId()).rejects.toBeInstanceOf(StoreUnavailableError);
    state.down = false;
    const after = await segments.nextId();
    expect(after).toBeGreaterThan(200n);
    await segments.close();
  });

  it('a store slower than a segment lasts: callers wait for the one fetch in flight, nextIdSync does not wait', async () => {
    const { store: s, state } = faulty(store);
    const segments = await onFreshTag(s, 10);
    const slowStore = gate();
    state.hold = slowStore.opened;
    const first = await Promise.all(Array.from({ length: 10 }, () => segments.nextId()));
    expect(first).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
    const waiting = Promise.all(Array.from({ length: 25 }, () => segments.nextId()));
    await turn();
    expect(() => segments.nextIdSync()).toThrow(BufferEmptyError);
    expect(state.maxInFlight).toBe(1);
    state.hold = undefined;
    slowStore.open();
    const later = await waiting;
    expect(new Set(later).size).toBe(25);
    expect(later.every((id) => id > 10n)).toBe(true);
    await segments.close();
  });
});

describe('the dynamic step', () => {
  const rule = { minStep: 100, maxStep: 800, targetMs: 1000 };
  it.each<[number, number | undefined, number, string]>([
    [100, undefined, 100, 'first fetch keeps the step'],
    [100, 999, 200, 'shorter than the target doubles'],
    [400, 999, 800, 'doubles up to the maximum'],
    [800, 10, 800, 'stays at the maximum'],
    [200, 1000, 200, 'at the target keeps'],
    [200, 2000, 200, 'at twice the target keeps'],
    [400, 2001, 200, 'longer than twice the target halves'],
    [150, 5000, 100, 'halves down to the minimum'],
    [100, 1e9, 100, 'stays at the minimum'],
    [200, -5000, 400, 'a clock stepped back reads as short: doubles, bounded'],
  ])('step %d after %s ms -> %d (%s)', (step, lasted, expected) => {
    expect(nextStep(step, lasted, rule)).toBe(expected);
  });

  it('grows while segments go fast and shrinks when they go slow, on the injected clock', async () => {
    const clock = new FakeClock(1_000_000);
    const { store: s, state } = faulty(store);
    const segments = await onFreshTag(s, 100, { maxStep: 800, targetMs: 1000, clock });
    const drain = async (ms: number) => {
      const target = state.calls.length + 1;
      while (state.calls.length < target) {
        await segments.nextId();
        clock.advance(ms / 100);
      }
      await turn();
      await turn();
    };
    for (let i = 0; i < 5; i++) await drain(10);
    for (let i = 0; i < 5; i++) await drain(1_000_000);
    // The first fetch has no duration to go by; then five fast segments double up to the
    // maximum and stay there, and five slow ones halve down to the minimum and stay there.
    expect(state.calls.map((c) => c.step)).toEqual([100, 200, 400, 800, 800, 800, 400, 200, 100, 100, 100]);
    await segments.close();
  });

  it('clock steps change nothing in the IDs (the clock is never read for one)', async () => {
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const segments = await Segments.create({ store, tag: await createdTag(), step: 50, clock });
    const ids: bigint[] = [];
    for (const move of [0, -365 * 86_400_000, 10 * 365 * 86_400_000, -1, 0, -20 * 365 * 86_400_000]) {
      clock.advance(move);
      ids.push(...(await segments.nextIds(120)));
    }
    expect(ids).toEqual(Array.from({ length: 720 }, (_, i) => BigInt(i + 1)));
    await segments.close();
  });
});

describe('bad input and bad stores', () => {
  it.each([[''], ['a b'], ['-lead'], ['x'.repeat(65)], ['naïve'], ['drop";--'], [42], [undefined]])(
    'tag %j: InvalidTagError',
    async (tag) => {
      await expect(Segments.create({ store, tag: tag as string })).rejects.toBeInstanceOf(InvalidTagError);
    },
  );

  it.each([
    [{ step: 0 }],
    [{ step: -1 }],
    [{ step: 1.5 }],
    [{ step: 2 ** 31 }],
    [{ step: 100, minStep: 200 }],
    [{ step: 100, maxStep: 50 }],
    [{ step: Number.NaN }],
  ])('%j: StepOutOfRangeError', async (options) => {
    const error = await Segments.create({ store, tag: 'fine', ...options }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepOutOfRangeError);
    expect((error as Error).message).toMatch(/expected an integer from \d+ to \d+, received/);
  });

  it.each([
    ['prefetchAt 1', { prefetchAt: 1 }],
    ['prefetchAt -0.1', { prefetchAt: -0.1 }],
    ['targetMs 0', { targetMs: 0 }],
    ['createTag (no longer an option: creating is apart)', { createTag: true }],
    ['createTag false (refused too, never ignored)', { createTag: false }],
    ['a store without allocate', { store: {} }],
  ])('%s: InvalidArgumentError', async (_, options) => {
    await expect(Segments.create({ store, tag: 'fine', ...options } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('an unknown tag is UnknownTagError, not a new sequence from 1', async () => {
    const error = await Segments.create({ store, tag: 'never-registered' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownTagError);
    expect((error as UnknownTagError).code).toBe('ERR_IDS_SEGMENT_UNKNOWN_TAG');
  });

  it('createTag on a registered tag keeps its place (no reset to 1): refused with TagExistsError', async () => {
    const tag = await createdTag();
    const a = await Segments.create({ store, tag, step: 10, maxStep: 10 });
    await a.nextIds(5);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a's prefetch (11-20) lands
    const again = await store.createTag(tag, { after: 0n }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(TagExistsError);
    expect((again as Error).message).toMatch(
      /handed out IDs up to 20; expected after above 20 .*received 0n/,
    );
    const b = await Segments.create({ store, tag, step: 10 });
    expect(await b.nextId()).toBe(21n);
  });

  it('a negative max_id: StoreCorruptError, nothing issued from it', async () => {
    const tag = freshTag();
    await store.createTag(tag, { after: 0n, step: 10 });
    await store.sql.query('UPDATE leaf_alloc SET max_id = -500 WHERE tag = $1', [tag]);
    await expect(Segments.create({ store, tag, step: 10 })).rejects.toBeInstanceOf(StoreCorruptError);
  });

  it('a non-numeric max_id (a table made with a text column): StoreCorruptError', async () => {
    await store.sql.query(
      'CREATE TABLE texty (tag text PRIMARY KEY, max_id text, step integer, updated_at timestamptz)',
    );
    await store.sql.query("INSERT INTO texty VALUES ('t', 'twelve', 10, now())");
    const { sqlSegmentStore } = await import('../src/index.js');
    const texty = sqlSegmentStore(store.sql, 'pglite', { table: 'texty' });
    const error = await Segments.create({ store: texty, tag: 't', step: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
  });

  it('a max_id with no room for the step (past 2^63 - 1): StoreCorruptError', async () => {
    const tag = freshTag();
    await store.createTag(tag, { after: MAX_ID - 5n });
    const error = await Segments.create({ store, tag, step: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
  });

  it('a store set back below what this process holds: StoreWentBackwardsError, no duplicate', async () => {
    const tag = await createdTag();
    const segments = await Segments.create({ store, tag, step: 10, maxStep: 10 });
    const before = await segments.nextIds(2);
    await store.sql.query('UPDATE leaf_alloc SET max_id = 0 WHERE tag = $1', [tag]);
    const issued = [...before];
    let error: unknown;
    for (let i = 0; i < 30 && !error; i++) {
      try {
        issued.push(await segments.nextId());
      } catch (e) {
        error = e;
      }
    }
    expect(error).toBeInstanceOf(StoreWentBackwardsError);
    expect(new Set(issued).size).toBe(issued.length);
  });

  it('after close(): SegmentsClosedError', async () => {
    const segments = await Segments.create({ store, tag: await createdTag() });
    await segments.close();
    await expect(segments.nextId()).rejects.toBeInstanceOf(SegmentsClosedError);
    expect(() => segments.nextIdSync()).toThrow(SegmentsClosedError);
  });
});

describe('the other SQL uses of the same PGlite', () => {
  it('step/offset: blocks from a sequence INCREMENT BY 3 START 1 (database 2 of 3)', async () => {
    const { sqlSegmentStore } = await import('../src/index.js');
    const shard = sqlSegmentStore(store.sql, 'pglite', {
      stepOffset: { servers: 3, offset: 2, blockSize: 10 },
    });
    await shard.createTag('shard.one', { after: 0n });
    const segments = await Segments.create({ store: shard, tag: 'shard.one' });
    const ids = await segments.nextIds(25);
    // Blocks 1, 4, 7: IDs 11-20, 41-50, 71-75.
    expect(ids.slice(0, 11)).toEqual([11n, 12n, 13n, 14n, 15n, 16n, 17n, 18n, 19n, 20n, 41n]);
    expect(ids.at(-1)).toBe(75n);
    await segments.close();
  });

  it('sqlMachineId: a row inserted once, its number kept in the file', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { sqlMachineId } = await import('../src/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'ids-pglite-worker-'));
    try {
      const a = await sqlMachineId({ sql: store.sql, path: join(dir, 'a') })({ bits: 16 });
      const b = await sqlMachineId({ sql: store.sql, path: join(dir, 'b') })({ bits: 16 });
      const again = await sqlMachineId({ sql: store.sql, path: join(dir, 'a') })({ bits: 16 });
      expect([a, b, again]).toEqual([0, 1, 0]);
      expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('1\n');
      const { rows } = await store.sql.query('SELECT count(*)::int AS n FROM ids_worker');
      expect(rows).toEqual([{ n: 2 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loading', () => {
  it('importing @ids/segment loads no store client (pg, PGlite, ioredis)', async () => {
    const { spawnSync } = await import('node:child_process');
    const script = `
      require('@ids/segment');
      const loaded = Object.keys(require.cache).filter((p) => /node_modules\\/(pg|ioredis|@electric-sql)\\//.test(p));
      console.log(JSON.stringify(loaded));`;
    const run = spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      cwd: new URL('..', import.meta.url).pathname,
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([]);
  });
});

describe('SegmentTags (a route by tag)', () => {
  it('one Segments per tag, shared by concurrent first requests; a bad tag fails before the store', async () => {
    const { SegmentTags } = await import('../src/index.js');
    const { store: s, state } = faulty(store);
    for (const tag of ['route.a', 'route.b']) await s.createTag(tag, { after: 0n });
    const tags = new SegmentTags({ store: s, step: 10, maxStep: 10 });
    const ids = await Promise.all(
      Array.from({ length: 30 }, (_, i) => tags.nextId(i % 2 ? 'route.a' : 'route.b')),
    );
    // Each tag is its own sequence from 1: 15 distinct IDs each, created once (one first fetch each).
    for (const parity of [0, 1]) {
      const mine = ids.filter((_, i) => i % 2 === parity).sort((a, b) => (a < b ? -1 : 1));
      expect(mine).toEqual(Array.from({ length: 15 }, (_, i) => BigInt(i + 1)));
    }
    expect(tags.tags.sort()).toEqual(['route.a', 'route.b']);
    const calls = state.calls.length;
    await expect(tags.nextId('bad tag')).rejects.toBeInstanceOf(InvalidTagError);
    expect(state.calls.length).toBe(calls);
    expect(await tags.nextIds('route.a', 3)).toHaveLength(3);
    await tags.close();
    await expect(Segments.create({ store: s, tag: 'route.c' })).rejects.toBeInstanceOf(UnknownTagError);
  });
});
