// redisCheckMachineId: Go's SADD check, with SREM on close and typed errors.
import { MachineIdRejectedError } from '@ids/engine';
import { Sonyflake } from '@ids/sonyflake';
import { freePort, hasRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseStoreRefusedError, redisCheckMachineId, StoreUnavailableError } from '../src/index.js';
import { failure, freshPrefix, redisForSuite } from './helpers.js';

type RedisCheck = ReturnType<typeof redisCheckMachineId>;

describe.skipIf(!hasRedis())('redisCheckMachineId', () => {
  const suite = redisForSuite();

  /** Two hosts' checks on one fresh set named for `name`, both closed after `use`; the set's key. */
  async function twoHosts(
    name: string,
    use: (key: string, a: RedisCheck, b: RedisCheck) => Promise<void>,
  ): Promise<string> {
    const key = freshPrefix(name);
    const a = redisCheckMachineId({ url: suite.server.url, key });
    const b = redisCheckMachineId({ url: suite.server.url, key });
    try {
      await use(key, a, b);
    } finally {
      await a.close();
      await b.close();
    }
    return key;
  }

  it('SADD: true for the first caller, false after; close() removes only the IDs it added', async () => {
    const key = await twoHosts('check', async (key, a, b) => {
      expect(await a(7)).toBe(true);
      expect(await suite.admin.smembers(key)).toEqual(['7']);
      expect(await b(7)).toBe(false);
      expect(await a(7)).toBe(false); // Go's pattern: a second SADD of the same ID is refused
      expect(await b(8)).toBe(true);
      await a.close();
      expect(await suite.admin.smembers(key)).toEqual(['8']);
      expect(await b(7)).toBe(true);
    });
    expect(await suite.admin.exists(key)).toBe(0);
  });

  // Node fires a timer of more than 2^31 - 1 ms after 1 ms: the wait for the connection to be
  // ready then failed at once, before Redis could answer.
  it('a timeoutMs past the timer maximum waits for Redis instead of failing at once', async () => {
    const check = redisCheckMachineId({
      url: suite.server.url,
      key: freshPrefix('check-long'),
      timeoutMs: 2 ** 31,
    });
    try {
      expect(await check(3)).toBe(true);
    } finally {
      await check.close();
    }
  });

  it('refuses an ID held elsewhere the way Go does: the generator is not built', async () => {
    await twoHosts('check-gen', async (_key, other, mine) => {
      expect(await other(5)).toBe(true);
      await expect(Sonyflake.create({ machineId: 5, checkMachineId: mine })).rejects.toBeInstanceOf(
        MachineIdRejectedError,
      );
      const sonyflake = await Sonyflake.create({ machineId: 6, checkMachineId: mine });
      await sonyflake.nextId();
      await sonyflake.close();
    });
  });

  it('Redis cannot answer, or the key is not a set: a typed error, never a silent true or false', async () => {
    const port = await freePort();
    const down = redisCheckMachineId({ url: `redis://127.0.0.1:${port}`, timeoutMs: 500 });
    const error = await failure(down(1));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    await down.close();
    const key = freshPrefix('check-wrongtype');
    await suite.admin.set(key, 'not a set');
    const wrong = redisCheckMachineId({ url: suite.server.url, key });
    const e2 = await failure(wrong(1));
    expect(e2).toBeInstanceOf(LeaseStoreRefusedError);
    expect(e2.message).toMatch(/WRONGTYPE/);
    expect(await suite.admin.get(key)).toBe('not a set');
    await wrong.close();
  });

  it('bad input: an ID that is not a non-negative integer, a bad key', async () => {
    expect(() => redisCheckMachineId({ key: 'a b' })).toThrow(/key: expected a key prefix/);
    const check = redisCheckMachineId({ url: suite.server.url, key: freshPrefix('check-bad') });
    await expect(check(-1)).rejects.toThrow(/expected a machine ID/);
    await expect(check(1.5)).rejects.toThrow(/expected a machine ID/);
    await check.close();
  });
});
