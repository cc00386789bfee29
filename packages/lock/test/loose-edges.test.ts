// The loose edges of issue 34, each a typed error saying what was expected and what was
// received, raised before anything is sent (or before the lock is taken), on a real Redis.
import { describe, expect, it } from 'vitest';
import { fencedSet, type Locks } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, failure, redisForSuite, uniqueName } from './helpers.js';

describe('loose edges', () => {
  const redis = redisForSuite();
  const cleanup = cleanupAfterEach();

  async function open(): Promise<{ locks: Locks; prefix: string }> {
    const prefix = uniqueName('edges');
    await redis.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: redis.server.url, prefix });
    cleanup.push(() => locks.close());
    return { locks, prefix };
  }

  const invalid = (option: string) =>
    expect.objectContaining({
      code: 'ERR_IDS_INVALID_ARGUMENT',
      option,
      message: expect.stringMatching(/expected .+ received /),
    });

  it('fencedSet refuses a negative fence and a string fence, and leaves the stored order alone', async () => {
    const key = uniqueName('resource');
    expect(await fencedSet(redis.admin, key, 5n, 'five')).toBe(true);
    expect(await failure(fencedSet(redis.admin, key, -1n, 'minus one'))).toEqual(invalid('fence'));
    expect(await failure(fencedSet(redis.admin, key, '06' as unknown as bigint, 'a string'))).toEqual(
      invalid('fence'),
    );
    expect(await redis.admin.get(key)).toBe('five');
    // The newer fence still writes: nothing above was stored.
    expect(await fencedSet(redis.admin, key, 6n, 'six')).toBe(true);
  });

  it('fencedSet refuses expiryMs 0 (Redis would answer a bare ReplyError) and a fractional one', async () => {
    const key = uniqueName('resource');
    expect(await failure(fencedSet(redis.admin, key, 1n, 'v', 0))).toEqual(invalid('expiryMs'));
    expect(await failure(fencedSet(redis.admin, key, 1n, 'v', 1.5))).toEqual(invalid('expiryMs'));
    expect(await redis.admin.exists(key)).toBe(0);
    expect(await fencedSet(redis.admin, key, 1n, 'v', 60_000)).toBe(true);
  });

  it.each([
    ['ttlMs null', { ttlMs: null }, 'ttlMs'],
    ['waitMs null', { waitMs: null }, 'waitMs'],
    ['a number as options', 5, 'options'],
    ['a string as options', 'fast', 'options'],
    ['null as options', null, 'options'],
    ['the typo { ttl: 5 }', { ttl: 5 }, 'ttl'],
  ])('acquire refuses %s', async (_what, options, option) => {
    const { locks, prefix } = await open();
    expect(await failure(locks.acquire('n', options as object))).toEqual(invalid(option));
    // Refused before anything was sent: no fence was handed out.
    expect(await redis.admin.exists(`{${prefix}}:fence:n`)).toBe(0);
  });

  it('the typo names the option it likely meant; tryAcquire takes ttlMs only', async () => {
    const { locks } = await open();
    expect((await failure(locks.acquire('n', { ttl: 5 } as object))).message).toMatch(/did you mean ttlMs\?/);
    expect(await failure(locks.tryAcquire('n', { waitMs: 5 } as object))).toEqual(invalid('waitMs'));
  });

  it('withLock(name, 42) refuses before acquiring', async () => {
    const { locks, prefix } = await open();
    const error = await failure(locks.withLock('n', 42 as unknown as () => void));
    expect(error).toEqual(invalid('fn'));
    expect(await redis.admin.exists(`{${prefix}}:fence:n`)).toBe(0);
    expect(await redis.admin.exists(`{${prefix}}:held:n`)).toBe(0);
  });
});
