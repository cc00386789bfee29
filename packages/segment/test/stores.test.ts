// Each store on its real server: the same contract (register once, atomic ranges, unknown tag),
// the step/offset sequences across two databases, and what each store holds that is corrupt.

import { InvalidArgumentError } from '@ids/engine';
import { RedisDatabaseError, RedisOptionError } from '@ids/machine-redis';
import {
  freePort,
  hasPostgres,
  hasRedis,
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from '@ids/test-services';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_ID,
  openSegmentStore,
  pgliteStore,
  postgresStore,
  redisStore,
  type SegmentRange,
  type SegmentStore,
  Segments,
  StoreCorruptError,
  StoreUnavailableError,
  TagExistsError,
  UnknownTagError,
} from '../src/index.js';

function disjoint(ranges: readonly SegmentRange[]): boolean {
  const sorted = [...ranges].sort((a, b) => (a.first < b.first ? -1 : 1));
  return sorted.every((r, i) => i === 0 || r.first > sorted[i - 1]!.last);
}

/** The contract every store keeps, run against each (`raises`: createTag moves a tag up). */
function contract(name: string, open: () => Promise<SegmentStore>, raises = true) {
  describe(`${name}: the store contract`, () => {
    let store: SegmentStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('registers a tag once: a second createTag (a lower after) is refused and changes nothing', async () => {
      await store.createTag('once', { after: 41n, step: 10 });
      const again = await store.createTag('once', { after: 0n, step: 10 }).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(TagExistsError);
      expect((again as TagExistsError).code).toBe('ERR_IDS_SEGMENT_TAG_EXISTS');
      const range = await store.allocate('once', 10);
      expect(range.first).toBeGreaterThan(41n);
    });

    it('createTag again is refused at or below what was handed out, and raises the tag above it', async () => {
      await store.createTag('again', { after: 0n });
      const { last } = await store.allocate('again', 10);
      for (const after of [0n, 1n, last - 1n, last]) {
        const error = await store.createTag('again', { after }).catch((e: unknown) => e);
        expect(error, String(after)).toBeInstanceOf(TagExistsError);
        if (raises) expect((error as Error).message).toContain(`up to ${last}; expected after above ${last}`);
      }
      expect((await store.allocate('again', 10)).first).toBe(last + 1n);
      if (!raises) {
        // A sequence is never moved, not even up.
        await expect(store.createTag('again', { after: last + 1000n })).rejects.toBeInstanceOf(
          TagExistsError,
        );
        return;
      }
      await store.createTag('again', { after: last + 1000n });
      expect((await store.allocate('again', 10)).first).toBe(last + 1001n);
    });

    it('20 createTag at once on a fresh tag: one creates it, 19 are refused', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => store.createTag('contested', { after: 0n })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(TagExistsError);
      }
    });

    it.each([
      [-1n, /after: expected a bigint from 0n to 9223372036854775806n .*received -1n \(bigint\)/],
      [MAX_ID, /received 9223372036854775807n/],
      [5, /received 5 \(number\)/],
      ['5', /received "5" \(string\)/],
      [undefined, /received undefined/],
    ])('createTag after %s: InvalidArgumentError saying expected and received', async (after, message) => {
      const error = await store.createTag('typed', { after } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(message);
      await expect(store.allocate('typed', 10)).rejects.toBeInstanceOf(UnknownTagError);
    });

    it('300 allocations at once get disjoint ranges', async () => {
      await store.createTag('racy', { after: 0n, step: 10 });
      const ranges = await Promise.all(Array.from({ length: 300 }, () => store.allocate('racy', 10)));
      expect(disjoint(ranges)).toBe(true);
    });

    it('an unregistered tag: UnknownTagError', async () => {
      await expect(store.allocate('nobody', 10)).rejects.toBeInstanceOf(UnknownTagError);
    });
  });
}

contract('pglite (in memory)', () => pgliteStore());

describe.skipIf(!hasPostgres())('PostgreSQL', () => {
  let server: PostgresServer;
  const databases = ['shard0', 'shard1'];
  const urlOf = (db: string) => server.url.replace(/\/postgres$/, `/${db}`);
  beforeAll(async () => {
    server = await startPostgres();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    for (const db of databases) await admin.query(`CREATE DATABASE ${db}`).catch(() => undefined);
    await admin.end();
  });
  afterAll(async () => {
    await server?.close();
  });

  contract('postgres table', () => postgresStore({ connectionString: server.url }));
  contract(
    'postgres sequence',
    () =>
      postgresStore({
        connectionString: urlOf('shard0'),
        sequence: { databases: 1, index: 0, blockSize: 10 },
      }),
    false,
  );

  it('step/offset: two databases, each a sequence INCREMENT BY 2, never overlap', async () => {
    const stores = await Promise.all(
      databases.map((db, index) =>
        postgresStore({ connectionString: urlOf(db), sequence: { databases: 2, index, blockSize: 100 } }),
      ),
    );
    const all = await Promise.all(
      stores.map(async (store) => {
        await store.createTag('invoice', { after: 0n });
        const segments = await Segments.create({ store, tag: 'invoice' });
        return segments.nextIds(5000);
      }),
    );
    const ids = all.flat();
    expect(new Set(ids).size).toBe(10_000);
    // Database 0 hands out blocks 0, 2, 4...: 1-100, 201-300...; database 1 the others.
    expect(all[0]!.slice(0, 2)).toEqual([1n, 2n]);
    expect(all[1]![0]).toBe(101n);
    for (const store of stores) await store.close();
  });

  it("a user's own pg Pool works and is left open", async () => {
    const pool = new pg.Pool({ connectionString: server.url });
    // Like any pool a user owns, it needs its own 'error' listener: an idle client's error
    // (the server stopping at the end of the suite) is passed on to the pool's 'error' event.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const store = await postgresStore({ client: pool, table: 'own_alloc' });
    await store.createTag('own', { after: 0n });
    const segments = await Segments.create({ store, tag: 'own' });
    expect(await segments.next()).toBe(1n);
    await store.close();
    expect((await pool.query('SELECT count(*)::int AS n FROM own_alloc')).rows[0].n).toBe(1);
    await pool.end();
  });

  it('openSegmentStore picks the store from the URL', async () => {
    const store = await openSegmentStore(server.url);
    expect(store.kind).toBe('postgres');
    await store.close();
  });
});

describe.skipIf(!hasRedis())('Redis', () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    redis.on('error', () => undefined); // the restart test stops the server under it
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.close();
  });

  contract('redis', () => redisStore({ url: server.url }));

  // Issue 22 item 3: the database of the URL was dropped to 0 when the server did not have it.
  it('a database the server does not have: RedisDatabaseError, from redisStore and openSegmentStore', async () => {
    for (const open of [
      () => redisStore({ url: `${server.url}/99` }),
      () => openSegmentStore(`${server.url}/99`),
    ]) {
      const error = await open().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RedisDatabaseError);
      expect((error as RedisDatabaseError).database).toBe(99);
      expect((error as Error).message).toContain('received database 99: the server has databases 0 to 15');
    }
  });

  it('nothing listening at the URL: StoreUnavailableError from openSegmentStore, in the connect timeout', async () => {
    const port = await freePort();
    const error = await openSegmentStore(`redis://127.0.0.1:${port}`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/could not reach the Redis segment store/);
  });

  it.each(['abc', '-1'])('a database %j in the URL: RedisOptionError', async (db) => {
    await expect(openSegmentStore(`${server.url}/${db}`)).rejects.toThrow(RedisOptionError);
    await expect(openSegmentStore(`${server.url}/${db}`)).rejects.toThrow(
      `expected a database number from 0 to 2,147,483,647, received "${db}" (string)`,
    );
  });

  it('a database the server has: the tag lives there', async () => {
    const store = await openSegmentStore(`${server.url}/5`);
    await store.createTag('in-db-5', { after: 41n, step: 1 });
    const db5 = new Redis(`${server.url}/5`);
    expect(await db5.get('ids:segment:in-db-5')).toBe('41');
    expect(await redis.exists('ids:segment:in-db-5')).toBe(0);
    db5.disconnect();
    await store.close();
  });

  it.each([
    ['a non-numeric value', 'twelve'],
    ['a negative value', '-500'],
    ['no room for the step', '9223372036854775800'],
  ])('%s: StoreCorruptError', async (_, value) => {
    const store = await redisStore({ url: server.url });
    await redis.set('ids:segment:bad', value);
    await expect(Segments.create({ store, tag: 'bad', step: 100 })).rejects.toBeInstanceOf(StoreCorruptError);
    await store.close();
  });

  it.skipIf(process.env.REDIS_URL)(
    'Redis restarted empty: no ID at or below the last issued is served again, until created above it',
    async () => {
      const store = await redisStore({ url: server.url });
      await store.createTag('forgets', { after: 0n });
      const running = await Segments.create({ store, tag: 'forgets', step: 100, maxStep: 100 });
      const before = await running.nextIds(150);
      const last = before.at(-1)!;
      await server.stop();
      await server.start();
      // The running process serves what its buffers hold (above `last`), then the typed error.
      // While the client reconnects the store is unavailable: asked again, as a caller would.
      const after: bigint[] = [];
      let error: unknown;
      for (let unavailable = 0; !error && unavailable < 200; ) {
        try {
          after.push(await running.next());
        } catch (e) {
          if (!(e instanceof StoreUnavailableError)) error = e;
          else {
            unavailable += 1;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      }
      expect(error).toBeInstanceOf(UnknownTagError);
      for (const id of after) expect(id).toBeGreaterThan(last);
      // A process restarted with the old call shape is refused, never created from 1 again...
      await expect(
        Segments.create({ store, tag: 'forgets', createTag: true } as never),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
      // ...and with the plain one the tag is unknown, with what to do.
      const unknown = await Segments.create({ store, tag: 'forgets' }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(UnknownTagError);
      expect((unknown as Error).message).toMatch(/create it once, above the highest ID it ever issued/);
      // The operator creates it once above the highest ID issued: served from there.
      const highest = after.length ? after.at(-1)! : last;
      await store.createTag('forgets', { after: highest });
      const again = await Segments.create({ store, tag: 'forgets' });
      expect(await again.next()).toBe(highest + 1n);
      await again.close();
      await running.close();
      await store.close();
    },
    60_000,
  );

  it('IDs past 2^53 stay exact', async () => {
    const store = await redisStore({ url: server.url });
    await store.createTag('big', { after: 2n ** 60n });
    const segments = await Segments.create({ store, tag: 'big', step: 10 });
    expect(await segments.nextIds(3)).toEqual([2n ** 60n + 1n, 2n ** 60n + 2n, 2n ** 60n + 3n]);
    await store.close();
  });
});
