// Issue 22 item 3 on a real Redis: a redis:// URL naming a database the server does not have
// was used as database 0 without a word (ioredis keeps a refused SELECT to its 'error' event);
// a database that is not a number was read as 0. Every way in (claims, the check, and
// openRedisClient, which @ids/segment and @ids/server use) now fails with a typed error.
import { InvalidArgumentError } from '@ids/engine';
import { hasRedis } from '@ids/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisDatabaseError, redisCheckMachineId, redisMachineId } from '../src/index.js';
import { openRedisClient, parseRedisUrl } from '../src/internal.js';
import { adminClient, failure, freshPrefix, redisForSuite } from './helpers.js';

describe('the database of a redis:// URL, parsed', () => {
  it.each([
    ['redis://h:1', 0],
    ['redis://h:1/', 0],
    ['redis://h:1/0', 0],
    ['rediss://:pw@h:1/15', 15],
    ['redis://h/2147483647', 2147483647],
  ])('%s names database %i', (url, database) => {
    expect(parseRedisUrl(url)).toEqual({ url, database });
  });

  it.each([
    ['redis://h:1/abc', '"abc" (string)'],
    ['redis://h:1/-1', '"-1" (string)'],
    ['redis://h:1/1.5', '"1.5" (string)'],
    ['redis://h:1/2147483648', '"2147483648" (string)'],
    ['redis://h:1/%31', '"%31" (string)'],
  ])('%s is InvalidArgumentError saying what the database must be', (url, shown) => {
    expect(() => parseRedisUrl(url, 'url')).toThrow(InvalidArgumentError);
    expect(() => parseRedisUrl(url, 'url')).toThrow(
      `url: the database of ${url}: expected a database number from 0 to 2,147,483,647, received ${shown}`,
    );
    // At once, where the provider is made: nothing is dialled.
    expect(() => redisMachineId({ url })).toThrow(InvalidArgumentError);
    expect(() => redisCheckMachineId({ url })).toThrow(InvalidArgumentError);
  });

  it('a URL with more path than a database is InvalidArgumentError', () => {
    expect(() => parseRedisUrl('redis://h:1/2/3')).toThrow(
      /^url: expected redis:\/\/\[\[user\]:password@\]host/,
    );
  });
});

describe.skipIf(!hasRedis())('a database the server does not have (real Redis)', () => {
  const suite = redisForSuite();
  const closers: (() => unknown)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });
  const at = (db: number | string) => `${suite.server.url}/${db}`;

  function expectDatabaseError(error: unknown, database: number): void {
    expect(error).toBeInstanceOf(RedisDatabaseError);
    const e = error as RedisDatabaseError;
    expect(e.code).toBe('ERR_IDS_REDIS_DATABASE');
    expect(e.database).toBe(database);
    expect(e.databases).toBe(16);
    expect(e.message).toContain(
      `expected a database the server has, received database ${database}: the server has databases 0 to 15 (its databases setting is 16); Redis answered ERR`,
    );
  }

  it('redisMachineId: rejects with RedisDatabaseError and writes nothing to database 0', async () => {
    const prefix = freshPrefix('db99');
    const error = await failure(redisMachineId({ url: at(99), prefix })({ bits: 4 }));
    expectDatabaseError(error, 99);
    expect(await suite.admin.keys(`{${prefix}}*`)).toEqual([]);
  });

  it('redisCheckMachineId: the check rejects with RedisDatabaseError', async () => {
    const check = redisCheckMachineId({ url: at(16), key: freshPrefix('check') });
    closers.push(() => check.close());
    expectDatabaseError(await failure(check(1)), 16);
  });

  it('openRedisClient (the segment and token stores): RedisDatabaseError', async () => {
    expectDatabaseError(await failure(openRedisClient(at(99))), 99);
  });

  it('a database the server has is used: the claim lands there, not in database 0', async () => {
    const prefix = freshPrefix('db3');
    const db3 = adminClient(at(3));
    closers.push(() => db3.disconnect());
    // A known past for ID 0 in database 3, so the claim is handed out at once (no unknown-past wait).
    await db3.set(`{${prefix}}:time:0`, String(Date.now() - 60_000));
    const claim = await redisMachineId({ url: at(3), prefix })({ bits: 0 });
    expect(await db3.exists(claim.key)).toBe(1);
    expect(await suite.admin.exists(claim.key)).toBe(0);
    await claim.release();
  });

  it('a user who may not read CONFIG: still the typed error, saying the count is unknown', async () => {
    const user = `limited-${process.pid}`;
    await suite.admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '+@all', '-config');
    closers.push(() => suite.admin.call('ACL', 'DELUSER', user));
    const url = `redis://${user}:pw@127.0.0.1:${suite.server.port}/99`;
    const error = (await failure(openRedisClient(url))) as RedisDatabaseError;
    expect(error).toBeInstanceOf(RedisDatabaseError);
    expect(error.databases).toBeUndefined();
    expect(error.message).toContain(
      'received database 99: the server did not say how many it has (CONFIG GET databases was refused)',
    );
    expect(error.message).not.toContain(':pw@');
  });
});
