// Idempotency-Key records on a real Redis.
import { gate } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { fingerprint, idempotencyKeys } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, redisForSuite, uniqueName } from './helpers.js';

describe('idempotency on Redis', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();

  async function keys(extra: object = {}) {
    const prefix = uniqueName('idem');
    await suite.admin.set(`{${prefix}}:epoch`, '0'); // a Redis that forgot nothing: no quarantine
    const locks = await redisLocks({ url: suite.server.url, prefix });
    cleanup.push(() => locks.close());
    return idempotencyKeys(suite.admin, locks, { prefix: `${prefix}:records`, ...extra });
  }

  it('200 concurrent requests with one key: one execution, the rest 409 or the replayed response', async () => {
    const idem = await keys();
    const print = fingerprint('POST', '/ids', '{"count":3}');
    let executions = 0;
    let others = 0;
    const othersAnswered = gate();
    const work = async () => {
      executions++;
      await othersAnswered.opened; // still running while every other request is answered
      return { status: 201, body: '{"ids":["1","2","3"]}' };
    };
    const requests = Array.from({ length: 200 }, () =>
      idem.run('key-1', print, work).then((response) => {
        if (response.outcome !== 'executed' && ++others === 199) othersAnswered.open();
        return response;
      }),
    );
    const responses = await Promise.all(requests);
    expect(executions).toBe(1);
    const outcomes = responses.map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'executed')).toHaveLength(1);
    for (const r of responses) {
      if (r.outcome === 'in-progress') expect(r.status).toBe(409);
      else expect(r).toMatchObject({ status: 201, body: '{"ids":["1","2","3"]}' });
    }
    // A retry after completion gets the stored response, without running again.
    expect(await idem.run('key-1', print, work)).toEqual({
      status: 201,
      body: '{"ids":["1","2","3"]}',
      outcome: 'replayed',
    });
    expect(executions).toBe(1);
    // The same key with another payload: 422.
    expect(await idem.run('key-1', fingerprint('POST', '/ids', '{"count":4}'), work)).toMatchObject({
      status: 422,
      outcome: 'mismatch',
    });
    // No key where one is required: 400.
    expect(await idem.run(undefined, print, work)).toMatchObject({ status: 400, outcome: 'missing' });
    expect(executions).toBe(1);
  });

  it('a request that takes the key just as an earlier holder stores its answer replays that answer, it does not run', async () => {
    // The interleaving a pause makes: A's lock is gone from Redis (here deleted, as its lease
    // running out would) while A still works; B takes the key with a newer fence; A's answer is
    // stored before B starts. B's start is refused over the completed record, so B replays A's
    // answer rather than overwriting it with its own (two answers for one key).
    const prefix = uniqueName('idem');
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: suite.server.url, prefix });
    cleanup.push(() => locks.close());
    const options = { prefix: `${prefix}:records`, ttlMs: 5000 };
    const a = idempotencyKeys(suite.admin, locks, options);
    const bHolds = gate();
    const bMayStart = gate();
    // B's locks: the same, but B pauses right after taking the key.
    const paused = Object.create(locks) as typeof locks;
    paused.tryAcquire = async (name, o) => {
      const lock = await locks.tryAcquire(name, o);
      bHolds.open();
      await bMayStart.opened;
      return lock;
    };
    const b = idempotencyKeys(suite.admin, paused, options);
    const aFinishes = gate();
    const aWorks = gate();
    const first = a.run('k', 'p', async () => {
      aWorks.open();
      await aFinishes.opened;
      return { status: 200, body: 'A' };
    });
    await aWorks.opened;
    const [held] = await suite.admin.keys(`{${prefix}}:held:*`);
    await suite.admin.del(held as string);
    let bRan = false;
    const second = b.run('k', 'p', async () => {
      bRan = true;
      return { status: 200, body: 'B' };
    });
    await bHolds.opened;
    aFinishes.open();
    expect(await first).toEqual({ status: 200, body: 'A', outcome: 'executed' });
    bMayStart.open();
    expect(await second).toEqual({ status: 200, body: 'A', outcome: 'replayed' });
    expect(bRan).toBe(false);
  });

  it('the record expires after expiryMs (Redis keeps the time), and work that throws stores nothing', async () => {
    const prefix = uniqueName('idem');
    await suite.admin.set(`{${prefix}}:epoch`, '0');
    const locks = await redisLocks({ url: suite.server.url, prefix });
    cleanup.push(() => locks.close());
    const idem = idempotencyKeys(suite.admin, locks, { prefix: `${prefix}:records`, expiryMs: 60_000 });
    await idem.run('k', 'p', async () => ({ status: 200, body: 'x' }));
    const [recordKey] = await suite.admin.keys(`${prefix}:records:*[0-9a-f]`);
    const pttl = await suite.admin.pttl(recordKey as string);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
    await expect(idem.run('k2', 'p', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await idem.run('k2', 'p', async () => ({ status: 200, body: 'second try' }))).toMatchObject({
      outcome: 'executed',
    });
    expect(() => idempotencyKeys(suite.admin, locks, { expiryMs: 0 })).toThrow(
      /expiryMs: expected an integer from 1/,
    );
  });
});
