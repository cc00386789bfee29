import { hasRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseBitsMismatchError, LeaseCorruptClaimError, redisMachineId } from '../src/index.js';
import { claim, failure, freshPrefix, layoutWith, redisForSuite } from './helpers.js';

const fast = { ttlSeconds: 2, fenceMarginMs: 500, timeoutMs: 1000 } as const;
const identity = (token = 'ab'.repeat(16)) =>
  JSON.stringify({ token, host: 'elsewhere', pid: 1, started: '2020-01-01T00:00:00.000Z' });

describe.skipIf(!hasRedis())('redisMachineId against a real Redis', () => {
  const suite = redisForSuite();

  /** Seeds a recorded time so the first claim of an ID does not wait out the unknown past. */
  async function seedTimes(prefix: string, ids: number[]): Promise<void> {
    for (const id of ids) await suite.admin.set(`{${prefix}}:time:${id}`, String(Date.now() - 60_000));
  }

  /**
   * A claim of the fast settings on a fresh prefix named for `name`, in a field of `bits` bits
   * whose IDs `seeded` have a recorded time.
   */
  async function fastClaim(name: string, bits: number, seeded: number[]) {
    const prefix = freshPrefix(name);
    const layout = layoutWith(bits);
    await seedTimes(prefix, seeded);
    const held = await claim(layout, { url: suite.server.url, prefix, ...fast });
    return { prefix, layout, held };
  }

  it('claims a free ID with SET NX PX: its key holds the lease token, expiring within the TTL', async () => {
    const { prefix, held } = await fastClaim('claim', 4, [...Array(16).keys()]);
    const key = `{${prefix}}:${held.machineId}`;
    expect(held.key).toBe(key);
    const value = JSON.parse((await suite.admin.get(key))!);
    expect(value).toMatchObject({ token: held.leaseId, pid: process.pid });
    const ttl = await suite.admin.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2000);
    await held.release();
  });

  it('close() deletes only its own key: a key re-taken by another token is left alone', async () => {
    const prefix = freshPrefix('own-key');
    await seedTimes(prefix, [0]);
    const held = await claim(layoutWith(0), { url: suite.server.url, prefix, ...fast });
    const other = identity();
    await suite.admin.set(held.key, other, 'PX', 60_000); // an operator hands the ID to someone else
    await held.release();
    expect(await suite.admin.get(held.key)).toBe(other);
  });

  it('garbage under the prefix (a value, a hash, a recorded time, the index): LeaseCorruptClaimError naming the key, never taken or overwritten', async () => {
    const layout = layoutWith(0);
    const cases: { name: string; put: (prefix: string) => Promise<unknown>; key: (p: string) => string }[] = [
      { name: 'value', put: (p) => suite.admin.set(`{${p}}:0`, 'hello'), key: (p) => `{${p}}:0` },
      { name: 'hash', put: (p) => suite.admin.hset(`{${p}}:0`, 'a', '1'), key: (p) => `{${p}}:0` },
      {
        name: 'time',
        put: (p) => suite.admin.set(`{${p}}:time:0`, 'yesterday'),
        key: (p) => `{${p}}:time:0`,
      },
    ];
    for (const c of cases) {
      const prefix = freshPrefix(`garbage-${c.name}`);
      await c.put(prefix);
      const before = await suite.admin.dump(c.key(prefix));
      const error = await failure(claim(layout, { url: suite.server.url, prefix, ...fast }));
      expect(error.cause, c.name).toBeInstanceOf(LeaseCorruptClaimError);
      expect((error.cause as LeaseCorruptClaimError).code).toBe('ERR_IDS_LEASE_CORRUPT_CLAIM');
      expect((error.cause as LeaseCorruptClaimError).key).toBe(c.key(prefix));
      expect(await suite.admin.dump(c.key(prefix)), `${c.name} left as it was`).toEqual(before);
      expect(await suite.admin.exists(`{${prefix}}:0`)).toBe(c.name === 'time' ? 0 : 1);
    }
    // The listing comes back as one string of members joined by commas: a member with a comma
    // in it, each part a valid ID, is refused too, not read as two IDs.
    for (const [member, said] of [
      ['x7', /claim index .* holds "x7"/],
      ['3,4', /claim index .* holds a member with a comma/],
    ] as const) {
      const prefix = freshPrefix('garbage-index');
      await suite.admin.set(`{${prefix}}:time:0`, '1');
      await suite.admin.set(`{${prefix}}:0`, identity());
      await suite.admin.zadd(`{${prefix}}:claims`, Date.now() + 60_000, member);
      const error = await failure(claim(layout, { url: suite.server.url, prefix, ...fast, probes: 0 }));
      expect(error.cause, member).toBeInstanceOf(LeaseCorruptClaimError);
      expect((error.cause as Error).message).toMatch(said);
    }
  });

  it('bits that do not match the generator: refused before any connection', async () => {
    const error = await failure(
      Promise.resolve().then(() => redisMachineId({ url: 'redis://127.0.0.1:1', bits: 4 })({ bits: 8 })),
    );
    expect(error).toBeInstanceOf(LeaseBitsMismatchError);
  });
});
