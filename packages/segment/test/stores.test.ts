// Each store on its real server: the same contract (register once, atomic ranges, unknown tag),
// the step/offset sequences across two databases, and what each store holds that is corrupt.

import { RedisDatabaseError, RedisOptionError } from '@ids/machine-redis';
import {
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
  openSegmentStore,
  postgresStore,
  redisStore,
  type SegmentRange,
  type SegmentStore,
  Segments,
  StoreCorruptError,
  UnknownTagError,
} from '../src/index.js';

function disjoint(ranges: readonly SegmentRange[]): boolean {
  const sorted = [...ranges].sort((a, b) => (a.first < b.first ? -1 : 1));
  return sorted.every((r, i) => i === 0 || r.first > sorted[i - 1]!.last);
}

/** The contract every store keeps, run against each. */
function contract(name: string, open: () => Promise<SegmentStore>) {
  describe(`${name}: the store contract`, () => {
    let store: SegmentStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('registers a tag once: a second createTag (another after) changes nothing', async () => {
      await store.createTag('once', { after: 41n, step: 10 });
      await store.createTag('once', { after: 0n, step: 10 });
      const range = await store.allocate('once', 10);
      expect(range.first).toBeGreaterThan(41n);
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
  contract('postgres sequence', () =>
    postgresStore({ connectionString: urlOf('shard0'), sequence: { databases: 1, index: 0, blockSize: 10 } }),
  );

  it('step/offset: two databases, each a sequence INCREMENT BY 2, never overlap', async () => {
    const stores = await Promise.all(
      databases.map((db, index) =>
        postgresStore({ connectionString: urlOf(db), sequence: { databases: 2, index, blockSize: 100 } }),
      ),
    );
    const all = await Promise.all(
      stores.map(async (store) => {
        const segments = await Segments.create({ store, tag: 'invoice', createTag: true });
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
    const segments = await Segments.create({ store, tag: 'own', createTag: true });
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

  it('IDs past 2^53 stay exact', async () => {
    const store = await redisStore({ url: server.url });
    const segments = await Segments.create({ store, tag: 'big', createTag: { after: 2n ** 60n }, step: 10 });
    expect(await segments.nextIds(3)).toEqual([2n ** 60n + 1n, 2n ** 60n + 2n, 2n ** 60n + 3n]);
    await store.close();
  });
});
