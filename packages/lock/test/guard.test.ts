// The guards refuse a write whose fence is older than one already accepted, on the real servers:
// Redis (FENCED_SET) and PostgreSQL (the UPDATE pattern of the README).
import { serverForSuite, startPostgres } from '@ids/test-services';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { fencedSet } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { redisForSuite, uniqueName } from './helpers.js';

/** The statement the README documents for PostgreSQL. */
const FENCED_UPDATE = 'UPDATE accounts SET balance = $2, fence = $1 WHERE id = $3 AND fence <= $1';

describe('guarded writes refuse a paused holder', () => {
  const redis = redisForSuite();
  const postgres = serverForSuite(startPostgres);

  /** Two holders of one name, one after the other: the first stands for the paused one. */
  async function twoFences(): Promise<[bigint, bigint]> {
    const prefix = uniqueName('guard');
    await redis.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: redis.server.url, prefix });
    try {
      const paused = await locks.acquire('account:7');
      const fence = paused.fence;
      await paused.release();
      const next = await locks.acquire('account:7');
      const fences: [bigint, bigint] = [fence, next.fence];
      await next.release();
      return fences;
    } finally {
      await locks.close();
    }
  }

  it('Redis: FENCED_SET accepts the newer fence (twice), then refuses the older one', async () => {
    const [old, newer] = await twoFences();
    const key = `${uniqueName('resource')}`;
    expect(await fencedSet(redis.admin, key, newer, 'a')).toBe(true);
    expect(await fencedSet(redis.admin, key, newer, 'b')).toBe(true);
    expect(await fencedSet(redis.admin, key, old, 'late')).toBe(false);
    expect(await redis.admin.get(key)).toBe('b');
    // Fences past 2^53 compare exactly (as decimal strings, never Lua doubles).
    const big = 2n ** 60n;
    expect(await fencedSet(redis.admin, key, big + 1n, 'c')).toBe(true);
    expect(await fencedSet(redis.admin, key, big, 'late')).toBe(false);
  });

  it('PostgreSQL: UPDATE ... WHERE fence <= $1 changes no row for the older fence', async () => {
    const [old, newer] = await twoFences();
    const client = new pg.Client({ connectionString: postgres.server.url });
    await client.connect();
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS accounts (id int PRIMARY KEY, balance int NOT NULL, fence bigint NOT NULL DEFAULT 0)',
      );
      await client.query(
        'INSERT INTO accounts (id, balance) VALUES (7, 100) ON CONFLICT (id) DO UPDATE SET balance = 100, fence = 0',
      );
      expect((await client.query(FENCED_UPDATE, [newer.toString(), 90, 7])).rowCount).toBe(1);
      expect((await client.query(FENCED_UPDATE, [newer.toString(), 80, 7])).rowCount).toBe(1);
      expect((await client.query(FENCED_UPDATE, [old.toString(), 0, 7])).rowCount).toBe(0);
      const row = await client.query('SELECT balance, fence FROM accounts WHERE id = 7');
      expect(row.rows[0]).toEqual({ balance: 80, fence: newer.toString() });
    } finally {
      await client.end();
    }
  });
});
