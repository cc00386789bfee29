// Segment IDs by tag through the bin, on the three stores: PGlite in a temporary directory, and
// a real PostgreSQL and Redis started on free loopback ports.
import { readFileSync } from 'node:fs';
import {
  hasPostgres,
  hasRedis,
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from '@ids/test-services';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  type BinRun,
  call,
  expectError,
  matchesSpec,
  pollUntil,
  type Reply,
  runBin,
  scratch,
  startBin,
} from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
async function checked(run: BinRun, doc: any, path: string): Promise<Reply> {
  const reply = await call(run.url, 'GET', path);
  const template = path.startsWith('/api/segment/get/') ? '/api/segment/get/{tag}' : '/api/segment/ids/{tag}';
  matchesSpec(doc, 'GET', template, reply);
  return reply;
}

/** 100 requests of each route on each server at once; every ID as a bigint. */
async function load(runs: BinRun[], tag: string): Promise<bigint[]> {
  const replies = await Promise.all(
    runs.flatMap((run) =>
      Array.from({ length: 100 }, (_, i) =>
        call(run.url, 'GET', i % 2 ? `/api/segment/get/${tag}` : `/api/segment/ids/${tag}?count=50`),
      ),
    ),
  );
  return replies.flatMap((r) => {
    expect(r.status, r.text).toBe(200);
    return (r.json.ids ?? [r.json.id]).map(BigInt);
  });
}

describe('segment routes on PGlite (a temporary directory)', () => {
  let run: BinRun;
  let dir: string;
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
  let doc: any;
  const args = () => ['--segment-store', `pglite:${dir}`, '--segment-tags', 'orders,invoices'];

  beforeAll(async () => {
    dir = scratch();
    run = await startBin({ IDS_CLAIM_DIR: scratch() }, args());
    doc = (await call(run.url, 'GET', '/openapi.json')).json;
  });
  afterAll(async () => {
    await run?.stop();
  });

  it('the document describes both routes and stays valid', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/segment/get/{tag}', '/api/segment/ids/{tag}']),
    );
  });

  it('GET /api/segment/get/{tag}: 1, 2, 3... per tag; /ids/{tag}?count=N continues them', async () => {
    expect((await checked(run, doc, '/api/segment/get/orders')).json).toEqual({ id: '1' });
    expect((await checked(run, doc, '/api/segment/get/orders')).json).toEqual({ id: '2' });
    expect((await checked(run, doc, '/api/segment/ids/orders?count=3')).json).toEqual({
      ids: ['3', '4', '5'],
    });
    expect((await checked(run, doc, '/api/segment/get/invoices')).json).toEqual({ id: '1' });
    const ids = (await load([run], 'orders')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(new Set(ids).size).toBe(50 * 50 + 50);
    expect(ids[0]).toBe(6n);
  });

  it('bad tag 400, unknown tag 404, bad count 400: JSON errors with stable codes, in the document', async () => {
    for (const tag of ['-orders', 'a%20b', 'x'.repeat(65)]) {
      const reply = await checked(run, doc, `/api/segment/get/${tag}`);
      expectError(reply, 400, 'ERR_IDS_SEGMENT_INVALID_TAG');
    }
    expectError(await checked(run, doc, '/api/segment/get/nope'), 404, 'ERR_IDS_SEGMENT_UNKNOWN_TAG', /nope/);
    expectError(await checked(run, doc, '/api/segment/ids/nope?count=2'), 404, 'ERR_IDS_SEGMENT_UNKNOWN_TAG');
    for (const count of ['0', '1001', 'x', '']) {
      expectError(
        await checked(run, doc, `/api/segment/ids/orders?count=${count}`),
        400,
        'ERR_INVALID_COUNT',
        /from 1 to 1000/,
      );
    }
    expectError(await checked(run, doc, '/api/segment/ids/orders'), 400, 'ERR_INVALID_COUNT');
    expectError(await checked(run, doc, '/api/segment/get/orders?count=2'), 400, 'ERR_UNKNOWN_PARAMETER');
    expectError(await call(run.url, 'POST', '/api/segment/get/orders'), 405, 'ERR_METHOD_NOT_ALLOWED');
  });

  it('after a restart on the same directory, a tag continues above every ID issued', async () => {
    const before = BigInt((await call(run.url, 'GET', '/api/segment/get/orders')).json.id);
    expect(await run.stop()).toBe(0);
    run = await startBin({ IDS_CLAIM_DIR: scratch() }, args());
    const after = BigInt((await call(run.url, 'GET', '/api/segment/get/orders')).json.id);
    // The rest of the segment the first process held is skipped, never reissued.
    expect(after).toBeGreaterThan(before);
    expect((await call(run.url, 'GET', '/api/segment/get/invoices')).json.id).not.toBe('1');
  });

  it('a bad store string or tag is exit 2 before listening', async () => {
    const bad = await runBin({ IDS_CLAIM_DIR: scratch() }, ['--segment-store', 'mysql://x']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/segment-store: .*expected postgres:\/\/\.\.\., redis:\/\/\.\.\., pglite:/);
    const tag = await runBin({ IDS_CLAIM_DIR: scratch(), IDS_SEGMENT_STORE: 'pglite:' }, [
      '--segment-tags',
      'ok,-no',
    ]);
    expect(tag.code).toBe(2);
    expect(tag.err).toMatch(/segment-tags: /);
    expect(tag.out).not.toMatch(/listening/);
  });

  it('the bin imports @ids/segment, @ids/inspector, @ids/machine-redis and the store clients only when used', () => {
    // A build-output check: the only references to @ids/segment are dynamic imports.
    const bin = readFileSync(BIN, 'utf8');
    expect(bin).toMatch(/await import\(['"]@ids\/segment['"]\)/);
    expect(bin).not.toMatch(/^import[^;]*from ['"]@ids\/(segment|inspector|machine-redis)['"]/m);
    expect(bin).not.toMatch(/^import[^;]*['"](pg|@electric-sql\/pglite|ioredis)['"]/m);
  });
});

describe.skipIf(!hasPostgres())('segment routes on a real PostgreSQL', () => {
  let pg: PostgresServer;
  let runs: BinRun[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
    const env = { IDS_SEGMENT_STORE: pg.url, IDS_SEGMENT_TAGS: 'orders,later' };
    runs = await Promise.all([
      startBin({ ...env, IDS_CLAIM_DIR: scratch() }),
      startBin({ ...env, IDS_CLAIM_DIR: scratch() }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.stop()));
    await pg?.close();
  });

  it('two server processes on one store: every ID distinct', async () => {
    const ids = await load(runs, 'orders');
    expect(ids).toHaveLength(2 * (50 * 50 + 50));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.skipIf(process.env.DATABASE_URL)(
    'store down: 503 ERR_IDS_SEGMENT_STORE_UNAVAILABLE for a tag not yet buffered; back with the store',
    async () => {
      const run = runs[0]!;
      await pg.stop();
      try {
        const reply = await call(run.url, 'GET', '/api/segment/get/later');
        expectError(reply, 503, 'ERR_IDS_SEGMENT_STORE_UNAVAILABLE');
        expect(reply.headers['retry-after']).toBe('1');
        // IDs of the generators do not need the store.
        expect((await call(run.url, 'GET', '/id')).status).toBe(200);
      } finally {
        await pg.start();
      }
      const back = await call(run.url, 'GET', '/api/segment/get/later');
      expect(back.status, back.text).toBe(200);
    },
  );
});

describe.skipIf(!hasRedis())('segment routes on a real Redis', () => {
  let redis: RedisServer;
  let runs: BinRun[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const args = ['--segment-store', redis.url, '--segment-tags', 'orders,later'];
    runs = await Promise.all([
      startBin({ IDS_CLAIM_DIR: scratch() }, args),
      startBin({ IDS_CLAIM_DIR: scratch() }, args),
    ]);
  });
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.stop()));
    await redis?.close();
  });

  it('two server processes on one store: every ID distinct', async () => {
    const ids = await load(runs, 'orders');
    expect(new Set(ids).size).toBe(2 * (50 * 50 + 50));
  });

  it.skipIf(process.env.REDIS_URL)(
    'store down: 503 ERR_IDS_SEGMENT_STORE_UNAVAILABLE, answered at once; back with the store',
    async () => {
      const run = runs[1]!;
      await redis.stop();
      try {
        const t0 = performance.now();
        expectError(
          await call(run.url, 'GET', '/api/segment/get/later'),
          503,
          'ERR_IDS_SEGMENT_STORE_UNAVAILABLE',
        );
        expect(performance.now() - t0).toBeLessThan(10_000);
      } finally {
        await redis.start();
      }
      // The client reconnects with backoff: 503 until it has. Redis ran without persistence, so
      // it forgot the tag, which is then unknown rather than 1 again.
      const reply = await pollUntil(
        () => call(run.url, 'GET', '/api/segment/get/later'),
        (r) => r.status !== 503,
        100,
      );
      expectError(reply, 404, 'ERR_IDS_SEGMENT_UNKNOWN_TAG');
    },
  );
});
