// Each store on its real server: the same contract (register once, atomic ranges, unknown tag),
// the step/offset sequences across two databases (PostgreSQL) or servers (MySQL), Leaf's own
// leaf_alloc table, and what each store holds that is corrupt.

import { InvalidArgumentError, MAX_ID } from '@ids/engine';
import { RedisDatabaseError } from '@ids/machine-redis';
import {
  freePort,
  hasMariadb,
  hasPostgres,
  hasRedis,
  serverForSuite,
  startMariadb,
  startPostgres,
  startRedis,
} from '@ids/test-services';
import { Redis } from 'ioredis';
import { createPool, type Pool } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidTagError,
  mysqlStore,
  openSegmentStore,
  pgliteStore,
  postgresStore,
  redisStore,
  type SegmentRange,
  type SegmentStore,
  Segments,
  StepOffsetPlanError,
  StepOutOfRangeError,
  StoreCorruptError,
  StoreSchemaError,
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
    const store = serverForSuite(open);

    it('registers a tag once: a second createTag (a lower after) is refused and changes nothing', async () => {
      await store.server.createTag('once', { after: 41n, step: 10 });
      const again = await store.server.createTag('once', { after: 0n, step: 10 }).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(TagExistsError);
      expect((again as TagExistsError).code).toBe('ERR_IDS_SEGMENT_TAG_EXISTS');
      const range = await store.server.allocate('once', 10);
      expect(range.first).toBeGreaterThan(41n);
    });

    it('createTag again is refused at or below what was handed out, and raises the tag above it', async () => {
      await store.server.createTag('again', { after: 0n });
      const { last } = await store.server.allocate('again', 10);
      for (const after of [0n, 1n, last - 1n, last]) {
        const error = await store.server.createTag('again', { after }).catch((e: unknown) => e);
        expect(error, String(after)).toBeInstanceOf(TagExistsError);
        if (raises) expect((error as Error).message).toContain(`up to ${last}; expected after above ${last}`);
      }
      const next = await store.server.allocate('again', 10);
      expect(next.first).toBe(last + 1n);
      // Above the latest range: a store may hand out more than 10 (leaf_alloc's step is a minimum).
      if (!raises) {
        // A sequence is never moved, not even up.
        await expect(store.server.createTag('again', { after: next.last + 1000n })).rejects.toBeInstanceOf(
          TagExistsError,
        );
        return;
      }
      await store.server.createTag('again', { after: next.last + 1000n });
      expect((await store.server.allocate('again', 10)).first).toBe(next.last + 1001n);
    });

    it('20 createTag at once on a fresh tag, beside allocations: one creates it, 19 are refused (10 rounds)', async () => {
      await store.server.createTag('beside', { after: 0n });
      const ranges: SegmentRange[] = [];
      for (let round = 0; round < 10; round++) {
        const creates = Array.from({ length: 20 }, () =>
          store.server.createTag(`contested${round}`, { after: 0n }),
        );
        const allocations = Array.from({ length: 10 }, () => store.server.allocate('beside', 10));
        const [created, allocated] = await Promise.all([
          Promise.allSettled(creates),
          Promise.allSettled(allocations),
        ]);
        expect(
          created.filter((r) => r.status === 'fulfilled'),
          `round ${round}`,
        ).toHaveLength(1);
        for (const r of [...created, ...allocated]) {
          if (r.status === 'rejected' && !(r.reason instanceof TagExistsError)) throw r.reason;
        }
        expect(created.filter((r) => r.status === 'rejected')).toHaveLength(19);
        for (const r of allocated) if (r.status === 'fulfilled') ranges.push(r.value);
      }
      expect(ranges).toHaveLength(100);
      expect(disjoint(ranges)).toBe(true);
    });

    it.each([
      [-1n, /after: expected a bigint from 0n to 9223372036854775806n .*received -1n \(bigint\)/],
      [MAX_ID, /received 9223372036854775807n/],
      [5, /received 5 \(number\)/],
      ['5', /received "5" \(string\)/],
      [undefined, /received undefined/],
    ])('createTag after %s: InvalidArgumentError saying expected and received', async (after, message) => {
      const error = await store.server.createTag('typed', { after } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(message);
      await expect(store.server.allocate('typed', 10)).rejects.toBeInstanceOf(UnknownTagError);
    });

    it.each([
      [
        'bad tag',
        'no spaces',
        10,
        InvalidTagError,
        /tag: expected 1 to 64 characters .*received "no spaces"/,
      ],
      [
        'step 0',
        'checked',
        0,
        StepOutOfRangeError,
        /step: expected an integer from 1 to 2147483647, received 0/,
      ],
      ['step 1.5', 'checked', 1.5, StepOutOfRangeError, /received 1.5/],
      ['step as text', 'checked', '10', StepOutOfRangeError, /received "10" \(string\)/],
    ])('allocate with a %s: the same typed error from every store', async (_, tag, step, type, message) => {
      // Stores that hand out their own fixed size (a ticket, a sequence block) check the step too.
      await store.server.createTag('checked', { after: 0n }).catch((e: unknown) => {
        if (!(e instanceof TagExistsError)) throw e;
      });
      const error = await store.server.allocate(tag, step as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
    });

    it('300 allocations at once get disjoint ranges', async () => {
      await store.server.createTag('racy', { after: 0n, step: 10 });
      const ranges = await Promise.all(Array.from({ length: 300 }, () => store.server.allocate('racy', 10)));
      expect(disjoint(ranges)).toBe(true);
    });

    it('an unregistered tag: UnknownTagError', async () => {
      await expect(store.server.allocate('nobody', 10)).rejects.toBeInstanceOf(UnknownTagError);
    });
  });
}

contract('pglite (in memory)', () => pgliteStore());

describe.skipIf(!hasPostgres())('PostgreSQL', () => {
  const suite = serverForSuite(startPostgres);
  const databases = ['shard0', 'shard1'];
  const urlOf = (db: string) => suite.server.url.replace(/\/postgres$/, `/${db}`);
  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: suite.server.url });
    await admin.connect();
    for (const db of databases) await admin.query(`CREATE DATABASE ${db}`).catch(() => undefined);
    await admin.end();
  });

  contract('postgres table', () => postgresStore({ connectionString: suite.server.url }));
  contract(
    'postgres sequence',
    () =>
      postgresStore({
        connectionString: urlOf('shard0'),
        stepOffset: { servers: 1, offset: 1, blockSize: 10 },
      }),
    false,
  );

  it('step/offset: two databases, each a sequence INCREMENT BY 2, never overlap', async () => {
    const stores = await Promise.all(
      databases.map((db, index) =>
        postgresStore({
          connectionString: urlOf(db),
          stepOffset: { servers: 2, offset: index + 1, blockSize: 100 },
        }),
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
    const pool = new pg.Pool({ connectionString: suite.server.url });
    // Like any pool a user owns, it needs its own 'error' listener: an idle client's error
    // (the server stopping at the end of the suite) is passed on to the pool's 'error' event.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const store = await postgresStore({ client: pool, table: 'own_alloc' });
    await store.createTag('own', { after: 0n });
    const segments = await Segments.create({ store, tag: 'own' });
    expect(await segments.nextId()).toBe(1n);
    await store.close();
    expect((await pool.query('SELECT count(*)::int AS n FROM own_alloc')).rows[0].n).toBe(1);
    await pool.end();
  });

  it('openSegmentStore picks the store from the URL', async () => {
    const store = await openSegmentStore(suite.server.url);
    expect(store.kind).toBe('postgres');
    await store.close();
  });
});

describe.skipIf(!hasRedis())('Redis', () => {
  const suite = serverForSuite(startRedis);
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(suite.server.url);
    redis.on('error', () => undefined); // the restart test stops the server under it
  });
  afterAll(() => {
    redis?.disconnect();
  });

  contract('redis', () => redisStore({ url: suite.server.url }));

  // Issue 22 item 3: the database of the URL was dropped to 0 when the server did not have it.
  it('a database the server does not have: RedisDatabaseError, from redisStore and openSegmentStore', async () => {
    for (const open of [
      () => redisStore({ url: `${suite.server.url}/99` }),
      () => openSegmentStore(`${suite.server.url}/99`),
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

  it.each(['abc', '-1'])('a database %j in the URL: InvalidArgumentError', async (db) => {
    await expect(openSegmentStore(`${suite.server.url}/${db}`)).rejects.toThrow(InvalidArgumentError);
    await expect(openSegmentStore(`${suite.server.url}/${db}`)).rejects.toThrow(
      `expected a database number from 0 to 2,147,483,647, received "${db}" (string)`,
    );
  });

  it('a database the server has: the tag lives there', async () => {
    const store = await openSegmentStore(`${suite.server.url}/5`);
    await store.createTag('in-db-5', { after: 41n, step: 1 });
    const db5 = new Redis(`${suite.server.url}/5`);
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
    const store = await redisStore({ url: suite.server.url });
    await redis.set('ids:segment:bad', value);
    await expect(Segments.create({ store, tag: 'bad', step: 100 })).rejects.toBeInstanceOf(StoreCorruptError);
    await store.close();
  });

  it.skipIf(process.env.REDIS_URL)(
    'Redis restarted empty: no ID at or below the last issued is served again, until created above it',
    async () => {
      const store = await redisStore({ url: suite.server.url });
      await store.createTag('forgets', { after: 0n });
      const running = await Segments.create({ store, tag: 'forgets', step: 100, maxStep: 100 });
      const before = await running.nextIds(150);
      const last = before.at(-1)!;
      await suite.server.stop();
      await suite.server.start();
      // The running process serves what its buffers hold (above `last`), then the typed error.
      // While the client reconnects the store is unavailable: asked again, as a caller would.
      const after: bigint[] = [];
      let error: unknown;
      for (let unavailable = 0; !error && unavailable < 200; ) {
        try {
          after.push(await running.nextId());
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
      expect(await again.nextId()).toBe(highest + 1n);
      await again.close();
      await running.close();
      await store.close();
    },
    60_000,
  );

  it('IDs past 2^53 stay exact', async () => {
    const store = await redisStore({ url: suite.server.url });
    await store.createTag('big', { after: 2n ** 60n });
    const segments = await Segments.create({ store, tag: 'big', step: 10 });
    expect(await segments.nextIds(3)).toEqual([2n ** 60n + 1n, 2n ** 60n + 2n, 2n ** 60n + 3n]);
    await store.close();
  });
});

describe.skipIf(!hasMariadb())('MySQL (MariaDB)', () => {
  const suite = serverForSuite(startMariadb);
  let admin: Pool;
  const databases = ['leafdb', 'ticket0', 'ticket1', 'ticket2', 'replan', 'firstuse', 'firstuse2'];
  const urlOf = (db: string) => suite.server.url.replace(/\/ids$/, `/${db}`);
  beforeAll(async () => {
    admin = createPool({
      uri: suite.server.url,
      connectionLimit: 2,
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
    for (const db of databases) await admin.query(`CREATE DATABASE IF NOT EXISTS ${db}`);
  });
  afterAll(async () => {
    await admin?.end();
  });

  /**
   * A pool whose sessions carry a server's step/offset settings: what `auto_increment_increment`
   * and `auto_increment_offset` in each ID server's configuration give every connection.
   */
  function serverPool(db: string, increment: number, offset: number): Pool {
    const pool = createPool({ uri: urlOf(db), connectionLimit: 4 });
    pool.on('connection', (conn) => {
      conn.query(`SET SESSION auto_increment_increment = ${increment}, auto_increment_offset = ${offset}`);
    });
    return pool;
  }

  contract('mysql leaf_alloc', () => mysqlStore({ connectionString: suite.server.url }));
  contract(
    'mysql ticket table',
    () => mysqlStore({ connectionString: suite.server.url, scheme: 'ticket' }),
    false,
  );

  it("Leaf's own table and row: the first ID lies above its max_id, Leaf's step is the minimum, update_time moves", async () => {
    // The table as Leaf's README creates it, and a row as Leaf leaves it after issuing up to 999,999.
    await admin.query(`CREATE TABLE leafdb.leaf_alloc (
      biz_tag varchar(128) NOT NULL DEFAULT '',
      max_id bigint(20) NOT NULL DEFAULT '1',
      step int(11) NOT NULL,
      description varchar(256) DEFAULT NULL,
      update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
      PRIMARY KEY (biz_tag)
    ) ENGINE=InnoDB`);
    await admin.query(
      "INSERT INTO leafdb.leaf_alloc (biz_tag, max_id, step, description, update_time) VALUES ('leaf-test', 1000000, 2000, 'Test leaf Segment Mode Get Id', '2020-01-01 00:00:00')",
    );
    const store = await openSegmentStore(urlOf('leafdb'));
    expect(store.kind).toBe('mysql');
    // Asked for 100 per segment, given Leaf's 2,000: the row's step is the floor.
    const segments = await Segments.create({
      store,
      tag: 'leaf-test',
      step: 100,
      minStep: 100,
      maxStep: 100,
    });
    const ids = await segments.nextIds(2500);
    expect(ids[0]).toBe(1_000_001n);
    expect(ids.at(-1)).toBe(1_002_500n);
    const [rows] = await admin.query(
      "SELECT CAST(max_id AS CHAR) AS max_id, step, description, update_time > '2020-01-01' AS moved FROM leafdb.leaf_alloc WHERE biz_tag = 'leaf-test'",
    );
    // Two segments of 2,000 cover the 2,500 IDs; the third is fetched ahead once the second is
    // a tenth used, and whether that UPDATE has landed when this reads is a race (a loaded
    // fresh-clone run saw 1,006,000). Either way the row moved by whole steps of Leaf's 2,000.
    expect(rows).toHaveLength(1);
    expect(['1004000', '1006000']).toContain((rows as { max_id: string }[])[0]!.max_id);
    expect(rows).toMatchObject([{ step: 2000, description: 'Test leaf Segment Mode Get Id', moved: 1 }]);
    await segments.close();
    await store.close();
  });

  it("createTag on a row Leaf left: refused at or below its max_id, raised above it, Leaf's step and description kept", async () => {
    await admin.query(
      "CREATE TABLE IF NOT EXISTS leafdb.leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint NOT NULL DEFAULT 1, step int NOT NULL, description varchar(256), update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag))",
    );
    await admin.query(
      "INSERT INTO leafdb.leaf_alloc (biz_tag, max_id, step, description) VALUES ('leaf-raise', 500, 2000, 'by Leaf')",
    );
    const store = await mysqlStore({ connectionString: urlOf('leafdb') });
    const read = async () =>
      (
        await admin.query(
          "SELECT CAST(max_id AS CHAR) AS max_id, step, description FROM leafdb.leaf_alloc WHERE biz_tag = 'leaf-raise'",
        )
      )[0];
    for (const after of [0n, 499n, 500n]) {
      const error = await store.createTag('leaf-raise', { after }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TagExistsError);
      expect((error as Error).message).toContain('up to 500; expected after above 500');
    }
    expect(await read()).toEqual([{ max_id: '500', step: 2000, description: 'by Leaf' }]);
    await store.createTag('leaf-raise', { after: 10_000n, step: 7 });
    expect(await read()).toEqual([{ max_id: '10000', step: 2000, description: 'by Leaf' }]);
    const segments = await Segments.create({ store, tag: 'leaf-raise', step: 100 });
    expect(await segments.nextId()).toBe(10_001n);
    await segments.close();
    await store.close();
  });

  it.each([
    ['max_id near 2^63', '9223372036854775000', '1000', /no room for a step of 1000/],
    ['max_id negative', '-5', '1000', /expected max_id from 0/],
    ['step 0', '10', '0', /expected step to be 1 or more/],
    ['step negative', '10', '-100', /expected step to be 1 or more/],
  ])('a leaf_alloc row with %s: StoreCorruptError, nothing written', async (_, maxId, step, message) => {
    const tag = `bad-${maxId}-${step}`.replace(/[^A-Za-z0-9_.-]/g, '_');
    await admin.query(
      "CREATE TABLE IF NOT EXISTS leafdb.leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint NOT NULL DEFAULT 1, step int NOT NULL, description varchar(256), update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag))",
    );
    await admin.execute(
      'INSERT INTO leafdb.leaf_alloc (biz_tag, max_id, step) VALUES (?, CAST(? AS SIGNED), CAST(? AS SIGNED))',
      [tag, maxId, step],
    );
    const store = await mysqlStore({ connectionString: urlOf('leafdb') });
    const error = await Segments.create({ store, tag, step: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect((error as Error).message).toMatch(message);
    const [rows] = await admin.execute(
      'SELECT CAST(max_id AS CHAR) AS max_id, step FROM leafdb.leaf_alloc WHERE biz_tag = ?',
      [tag],
    );
    expect(rows).toEqual([{ max_id: maxId, step: Number(step) }]);
    await store.close();
  });

  it('a missing tag, a table with the wrong columns, a bad database: typed errors, nothing written', async () => {
    const store = await mysqlStore({ connectionString: urlOf('leafdb') });
    await expect(Segments.create({ store, tag: 'absent', step: 10 })).rejects.toBeInstanceOf(UnknownTagError);
    await store.close();
    await admin.query(
      'CREATE TABLE leafdb.wrong_alloc (tag varchar(64) PRIMARY KEY, max_id varchar(20), step int)',
    );
    await admin.query("INSERT INTO leafdb.wrong_alloc VALUES ('w', '10', 10)");
    const wrong = await mysqlStore({ connectionString: urlOf('leafdb'), table: 'wrong_alloc' });
    const error = await wrong.createTag('w', { after: 0n }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreSchemaError);
    expect((error as Error).message).toMatch(
      /biz_tag: missing; max_id: varchar, expected bigint; update_time: missing/,
    );
    const [rows] = await admin.query('SELECT * FROM leafdb.wrong_alloc');
    expect(rows).toEqual([{ tag: 'w', max_id: '10', step: 10 }]);
    await wrong.close();
    const nowhere = await openSegmentStore(urlOf('no_such_db'));
    await expect(nowhere.createTag('x', { after: 0n })).rejects.toBeInstanceOf(InvalidArgumentError);
    await nowhere.close();
    const [dbs] = await admin.query("SHOW DATABASES LIKE 'no_such_db'");
    expect(dbs).toEqual([]);
  });

  it('a ticket table without the unique key on seq_name: StoreSchemaError before any REPLACE', async () => {
    await admin.query(
      'CREATE TABLE ticket0.loose (seq_id bigint AUTO_INCREMENT PRIMARY KEY, seq_name varchar(64) NOT NULL)',
    );
    await admin.query("INSERT INTO ticket0.loose (seq_name) VALUES ('orderNo')");
    const store = await mysqlStore({ connectionString: urlOf('ticket0'), scheme: 'ticket', table: 'loose' });
    await expect(Segments.create({ store, tag: 'orderNo' })).rejects.toBeInstanceOf(StoreSchemaError);
    const [rows] = await admin.query('SELECT CAST(seq_id AS CHAR) AS seq_id, seq_name FROM ticket0.loose');
    expect(rows).toEqual([{ seq_id: '1', seq_name: 'orderNo' }]);
    await store.close();
  });

  it('ticket table: the design statements, one ID per round trip, one row per tag', async () => {
    const store = await mysqlStore({ connectionString: urlOf('ticket0'), scheme: 'ticket' });
    await store.createTag('orderNo', { after: 0n });
    const segments = await Segments.create({ store, tag: 'orderNo' });
    const ids = await Promise.all(Array.from({ length: 50 }, () => segments.nextId()));
    expect(new Set(ids).size).toBe(50);
    // One store call per ID (plus, at most, the prefetch of the next one).
    expect(segments.stats.roundTrips).toBeGreaterThanOrEqual(50);
    expect(segments.stats.roundTrips).toBeLessThanOrEqual(51);
    // A tag without a row: REPLACE would insert one; it is rolled back.
    await expect(store.allocate('nobody', 1)).rejects.toBeInstanceOf(UnknownTagError);
    const [rows] = await admin.query(
      'SELECT seq_name, count(*) AS n FROM ticket0.sequence GROUP BY seq_name',
    );
    expect(rows).toEqual([{ seq_name: 'orderNo', n: '1' }]);
    await segments.close();
    await store.close();
  });

  it('ticket table: an allocation or a createTag chosen as a deadlock victim runs again; 50 in a row is StoreUnavailableError', async () => {
    // The fault at the seam: a real pool whose REPLACE answers InnoDB's deadlock error (1213,
    // what concurrent REPLACEs of one tag meet on a busy server) while `victims` is above 0,
    // and whose createTag INSERT answers 1467 (a deadlock on the AUTO-INC lock) while
    // `insertVictims` is.
    const pool = createPool({ uri: urlOf('ticket0'), connectionLimit: 2 });
    let victims = 0;
    let insertVictims = 0;
    const client = {
      async getConnection() {
        const conn = await pool.getConnection();
        return new Proxy(conn, {
          get(target, key) {
            if (key === 'execute') {
              return (options: { sql: string }, values?: unknown[]) => {
                if (victims > 0 && options.sql.startsWith('REPLACE')) {
                  victims--;
                  const deadlock = new Error(
                    'Deadlock found when trying to get lock; try restarting transaction',
                  );
                  return Promise.reject(Object.assign(deadlock, { errno: 1213, code: 'ER_LOCK_DEADLOCK' }));
                }
                if (insertVictims > 0 && options.sql.startsWith('INSERT INTO `victims`')) {
                  insertVictims--;
                  const autoinc = new Error('Failed to read auto-increment value from storage engine');
                  return Promise.reject(
                    Object.assign(autoinc, { errno: 1467, code: 'ER_AUTOINC_READ_FAILED' }),
                  );
                }
                return target.execute(options, values as never);
              };
            }
            const value = Reflect.get(target, key);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
      },
    };
    const store = await mysqlStore({ client: client as never, scheme: 'ticket', table: 'victims' });
    insertVictims = 3;
    await store.createTag('t', { after: 0n });
    expect(insertVictims).toBe(0);
    insertVictims = 50;
    const refused = await store.createTag('u', { after: 0n }).catch((e: unknown) => e);
    expect(insertVictims).toBe(0);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(
      /expected the tag to be created to get through, received 50 deadlocks in a row \(InnoDB error 1467\)/,
    );
    // Nothing of it was written: the tag can be created afterwards.
    await store.createTag('u', { after: 0n });
    victims = 3;
    const first = await store.allocate('t', 1);
    expect(victims).toBe(0);
    expect((await store.allocate('t', 1)).first).toBeGreaterThan(first.last);

    victims = 50;
    const error = await store.allocate('t', 1).catch((e: unknown) => e);
    expect(victims).toBe(0);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(
      /expected an allocation to get through, received 50 deadlocks in a row/,
    );
    expect(((error as Error).cause as { errno?: number }).errno).toBe(1213);
    // Nothing of the victims was written: the next allocation follows the last one issued.
    const after = await store.allocate('t', 1);
    expect(after.first).toBeGreaterThan(first.last);
    await store.close();
    await pool.end();
  });

  it('step/offset: servers 1 and 2 of 2 interleave with no collision; offset 3 of 2, or a changed plan, is refused', async () => {
    const pools = [serverPool('ticket1', 2, 1), serverPool('ticket2', 2, 2)];
    const stores = await Promise.all(
      pools.map((client, i) => mysqlStore({ client, stepOffset: { servers: 2, offset: i + 1 } })),
    );
    const all = await Promise.all(
      stores.map(async (store) => {
        await store.createTag('orderNo', { after: 0n });
        const segments = await Segments.create({ store, tag: 'orderNo' });
        return segments.nextIds(300);
      }),
    );
    expect(new Set(all.flat()).size).toBe(600);
    expect(all[0]!.every((id) => id % 2n === 1n)).toBe(true);
    expect(all[1]!.every((id) => id % 2n === 0n)).toBe(true);
    for (const store of stores) expect(store.kind).toBe('mysql step/offset');
    for (const store of stores) await store.close();

    // A third server configured with offset 3 and increment 2 would issue 3, 5, 7...: server 1's.
    const third = serverPool('replan', 2, 3);
    await expect(mysqlStore({ client: third, stepOffset: { servers: 2, offset: 3 } })).rejects.toBeInstanceOf(
      StepOffsetPlanError,
    );
    // A store whose plan says server 2 of 2, on a server configured as 3 of 2: refused at first use.
    const mismatch = await mysqlStore({ client: third, stepOffset: { servers: 2, offset: 2 } });
    await expect(mismatch.createTag('orderNo', { after: 0n })).rejects.toBeInstanceOf(StepOffsetPlanError);
    await third.end();
    // Server 1 reconfigured for a third server (increment 3) against the plan of 2 written on first use.
    const grown = serverPool('ticket1', 3, 1);
    const replanned = await mysqlStore({ client: grown, stepOffset: { servers: 3, offset: 1 } });
    const error = await Segments.create({ store: replanned, tag: 'orderNo' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepOffsetPlanError);
    expect((error as Error).message).toMatch(/first used as server 1 of 2/);
    await grown.end();
    for (const pool of pools) await pool.end();
    // The refused first use wrote nothing, not even the ticket table.
    const [rows] = await admin.query(
      "SELECT count(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'replan'",
    );
    expect(rows).toEqual([{ n: '0' }]);
  });

  // Issue 33 item 4: a wrong plan was refused only after the ticket table and the plan row were
  // written, and the row then refused the server's correct plan until edited by hand.
  it('step/offset: a plan the server refuses at first use writes nothing, and the correct plan then works', async () => {
    const tablesOf = async (db: string) => {
      const [rows] = await admin.query(
        'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1',
        [db],
      );
      return (rows as { name: string }[]).map((r) => r.name);
    };
    // Through createTag, on an empty database: server 1 of 2, the store told 1 of 3.
    const pool = serverPool('firstuse', 2, 1);
    const wrong = await mysqlStore({ client: pool, stepOffset: { servers: 3, offset: 1 } });
    const error = await wrong.createTag('orderNo', { after: 0n }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepOffsetPlanError);
    expect((error as Error).message).toMatch(
      /expected auto_increment_increment = 3 .* the server has 2 and 1/,
    );
    expect(await tablesOf('firstuse')).toEqual([]);
    const right = await mysqlStore({ client: pool, stepOffset: { servers: 2, offset: 1 } });
    await right.createTag('orderNo', { after: 0n });
    const segments = await Segments.create({ store: right, tag: 'orderNo' });
    expect((await segments.nextIds(3)).map((id) => id % 2n)).toEqual([1n, 1n, 1n]);
    const [plan] = await admin.query('SELECT servers, server_offset FROM firstuse.ids_step_offset_plan');
    expect(plan).toEqual([{ servers: 2, server_offset: 1 }]);
    await pool.end();

    // Through the first allocation, on a ticket table made before (by hand, or by a store
    // without a plan): server 2 of 2, the store told 3 of 3.
    await admin.query(`CREATE TABLE firstuse2.sequence (
      seq_id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
      seq_name varchar(64) NOT NULL,
      UNIQUE KEY seq_name (seq_name)
    ) ENGINE=InnoDB`);
    await admin.query("INSERT INTO firstuse2.sequence (seq_name) VALUES ('orderNo')");
    const second = serverPool('firstuse2', 2, 2);
    const misplanned = await mysqlStore({ client: second, stepOffset: { servers: 3, offset: 3 } });
    await expect(Segments.create({ store: misplanned, tag: 'orderNo' })).rejects.toBeInstanceOf(
      StepOffsetPlanError,
    );
    expect(await tablesOf('firstuse2')).toEqual(['sequence']);
    const planned = await mysqlStore({ client: second, stepOffset: { servers: 2, offset: 2 } });
    expect((await (await Segments.create({ store: planned, tag: 'orderNo' })).nextId()) % 2n).toBe(0n);
    await second.end();
  });

  it('IDs past 2^53 stay exact (leaf and ticket)', async () => {
    for (const scheme of ['leaf', 'ticket'] as const) {
      const store = await mysqlStore({ connectionString: suite.server.url, scheme, table: `big_${scheme}` });
      await store.createTag('big', { after: 2n ** 60n, step: 10 });
      const segments = await Segments.create({ store, tag: 'big', step: 10 });
      const ids = await segments.nextIds(3);
      expect(ids[0]).toBeGreaterThan(2n ** 60n);
      expect(ids[1]! - ids[0]!).toBe(1n);
      await store.close();
    }
  });
});
