// Segment IDs by tag through the bin, on the four stores: PGlite in a temporary directory, and
// a real PostgreSQL, MySQL (MariaDB) and Redis started on free loopback ports.
import { readFileSync } from 'node:fs';
import { TagExistsError } from '@ids/segment';
import { hasRedis, serverForSuite, startRedis, storeServers } from '@ids/test-services';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  type BinRun,
  call,
  createTags,
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
    await createTags(`pglite:${dir}`, ['orders', 'invoices']);
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

  it('an Idempotency-Key on a segment route is 400 before any ID is drawn: the routes cannot honour one', async () => {
    const headers = { 'idempotency-key': 'order-9' };
    const next = BigInt((await checked(run, doc, '/api/segment/get/invoices')).json.id);
    for (const path of ['/api/segment/get/invoices', '/api/segment/ids/invoices?count=5']) {
      const reply = await call(run.url, 'GET', path, { headers });
      matchesSpec(
        doc,
        'GET',
        path.startsWith('/api/segment/get/') ? '/api/segment/get/{tag}' : '/api/segment/ids/{tag}',
        reply,
      );
      // Before, the key was ignored: each retry drew new IDs.
      expectError(
        reply,
        400,
        'ERR_IDEMPOTENCY_NOT_SUPPORTED',
        /^expected no Idempotency-Key header on GET \/api\/segment\//,
      );
    }
    expect(doc.paths['/api/segment/ids/{tag}'].get.responses['400'].description).toMatch(/Idempotency-Key/);
    // Nothing was drawn for the refused requests: the tag continues at the next ID.
    expect((await checked(run, doc, '/api/segment/get/invoices')).json).toEqual({ id: String(next + 1n) });
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

  it('the store forgot every tag (directory lost): restarted with the same flags, 404 saying what to run, never 1', async () => {
    const last = BigInt((await call(run.url, 'GET', '/api/segment/get/orders')).json.id);
    expect(last).toBeGreaterThan(1n);
    expect(await run.stop()).toBe(0);
    dir = scratch(); // the same flags on an empty directory: the store has forgotten everything
    run = await startBin({ IDS_CLAIM_DIR: scratch() }, args());
    expect(run.err()).toMatch(/ERR_IDS_SEGMENT_UNKNOWN_TAG: tag "orders"/);
    expect(run.err()).toMatch(/ERR_IDS_SEGMENT_UNKNOWN_TAG: tag "invoices"/);
    for (const path of ['/api/segment/get/orders', '/api/segment/ids/orders?count=3']) {
      expectError(
        await checked(run, doc, path),
        404,
        'ERR_IDS_SEGMENT_UNKNOWN_TAG',
        /ids segment create-tag orders --store <the --segment-store> --after N, N = 0 for a new tag, else at least the highest ID/,
      );
    }
    // The other routes work.
    expect((await call(run.url, 'GET', '/id')).status).toBe(200);
    expect((await call(run.url, 'GET', '/health/ready')).status).toBe(200);
  });

  it('a bad store string or tag is exit 2 before listening', async () => {
    const bad = await runBin({ IDS_CLAIM_DIR: scratch() }, ['--segment-store', 'mongodb://x']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(
      /segment-store: .*expected postgres:\/\/\.\.\., mysql:\/\/\.\.\., redis:\/\/\.\.\., pglite:/,
    );
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
    expect(bin).toMatch(/\(\) => import\(['"]@ids\/segment['"]\)/);
    expect(bin).not.toMatch(/^import[^;]*from ['"]@ids\/(segment|inspector|machine-redis)['"]/m);
    expect(bin).not.toMatch(/^import[^;]*['"](pg|@electric-sql\/pglite|ioredis|mysql2[^'"]*)['"]/m);
  });
});

// The same routes on each SQL server: `--segment-store postgres://...` and `mysql://...`.
for (const kind of [storeServers.postgres, storeServers.mariadb]) {
  describe.skipIf(!kind.has())(`segment routes on a real ${kind.name}`, () => {
    const db = serverForSuite(() => kind.start());
    let runs: BinRun[] = [];
    beforeAll(async () => {
      await createTags(db.server.url, ['orders', 'later']);
      // `later` is created but not configured: its first segment is fetched on its first request.
      const env = { IDS_SEGMENT_STORE: db.server.url, IDS_SEGMENT_TAGS: 'orders' };
      runs = await Promise.all([
        startBin({ ...env, IDS_CLAIM_DIR: scratch() }),
        startBin({ ...env, IDS_CLAIM_DIR: scratch() }),
      ]);
    });
    afterAll(async () => {
      await Promise.all(runs.map((run) => run.stop()));
    });

    it('two server processes on one store: every ID distinct', async () => {
      const ids = await load(runs, 'orders');
      expect(ids).toHaveLength(2 * (50 * 50 + 50));
      expect(new Set(ids).size).toBe(ids.length);
    });

    it.skipIf(process.env[kind.external])(
      'store down: 503 ERR_IDS_STORE_UNAVAILABLE for a tag not yet buffered; back with the store',
      async () => {
        const run = runs[0]!;
        await db.server.stop();
        try {
          const reply = await call(run.url, 'GET', '/api/segment/get/later');
          expectError(reply, 503, 'ERR_IDS_STORE_UNAVAILABLE');
          expect(reply.headers['retry-after']).toBe('1');
          // IDs of the generators do not need the store.
          expect((await call(run.url, 'GET', '/id')).status).toBe(200);
        } finally {
          await db.server.start();
        }
        const back = await call(run.url, 'GET', '/api/segment/get/later');
        expect(back.status, back.text).toBe(200);
      },
    );
  });
}

describe.skipIf(!hasRedis())('segment routes on a real Redis', () => {
  const redis = serverForSuite(startRedis);
  let runs: BinRun[] = [];
  beforeAll(async () => {
    await createTags(redis.server.url, ['orders', 'later']);
    // `later` is created but not configured: its first segment is fetched on its first request.
    const args = ['--segment-store', redis.server.url, '--segment-tags', 'orders'];
    runs = await Promise.all([
      startBin({ IDS_CLAIM_DIR: scratch() }, args),
      startBin({ IDS_CLAIM_DIR: scratch() }, args),
    ]);
  });
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.stop()));
  });

  it('two server processes on one store: every ID distinct', async () => {
    const ids = await load(runs, 'orders');
    expect(new Set(ids).size).toBe(2 * (50 * 50 + 50));
  });

  it.skipIf(process.env.REDIS_URL)(
    'store down: 503 ERR_IDS_STORE_UNAVAILABLE, answered at once; back with the store',
    async () => {
      const run = runs[1]!;
      await redis.server.stop();
      try {
        const t0 = performance.now();
        expectError(await call(run.url, 'GET', '/api/segment/get/later'), 503, 'ERR_IDS_STORE_UNAVAILABLE');
        expect(performance.now() - t0).toBeLessThan(10_000);
      } finally {
        await redis.server.start();
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

describe.skipIf(!hasRedis() || process.env.REDIS_URL)(
  'a Redis without persistence that forgot its tags',
  () => {
    const redis = serverForSuite(() => startRedis({ allowExternal: false }));
    let run: BinRun | undefined;
    const args = () => ['--segment-store', redis.server.url, '--segment-tags', 'orders'];
    afterAll(async () => {
      await run?.stop();
    });

    it('restarted empty, the server restarted with the same flags: no ID at or below the last issued, 404 until created above it', async () => {
      await createTags(redis.server.url, ['orders']);
      run = await startBin({ IDS_CLAIM_DIR: scratch() }, args());
      const before = await load([run], 'orders');
      let last = 0n;
      for (const id of before) if (id > last) last = id;
      expect(last).toBeGreaterThanOrEqual(BigInt(before.length));
      expect(await run.stop()).toBe(0);
      await redis.server.stop();
      await redis.server.start(); // no persistence: every key is gone
      run = await startBin({ IDS_CLAIM_DIR: scratch() }, args());
      expect(run.err()).toMatch(/ERR_IDS_SEGMENT_UNKNOWN_TAG: tag "orders" in redis key ids:segment:orders/);
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call(run!.url, 'GET', i % 2 ? '/api/segment/get/orders' : '/api/segment/ids/orders?count=10'),
        ),
      );
      for (const reply of replies) {
        expectError(reply, 404, 'ERR_IDS_SEGMENT_UNKNOWN_TAG', /ids segment create-tag orders .*--after N/);
      }
      expect((await call(run.url, 'GET', '/id')).status).toBe(200);
      // The operator creates it once, above the highest ID issued; the running server serves it.
      await createTags(redis.server.url, ['orders'], last);
      const after = await load([run], 'orders');
      for (const id of after) expect(id).toBeGreaterThan(last);
      // Creating it again, even from 0, is refused: the tag now exists.
      await expect(createTags(redis.server.url, ['orders'])).rejects.toBeInstanceOf(TagExistsError);
      const later = BigInt((await call(run.url, 'GET', '/api/segment/get/orders')).json.id);
      expect(later).toBeGreaterThan(last);
    }, 120_000);
  },
);
