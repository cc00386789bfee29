// The `auto` chain's Redis step: skipped without a URL, used with one, and stopping the chain
// (not falling through to a host-derived ID) when the Redis asked for cannot be used.
import { NoMachineIdHereError } from '@ids/engine';
import { freePort, hasRedis, startRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseStoreUnavailableError, redisAutoStep } from '../src/index.js';
import { freshPrefix } from './helpers.js';

describe('redisAutoStep', () => {
  it('skipped when neither the option nor IDS_REDIS_URL is given', async () => {
    const step = redisAutoStep({ env: {} });
    expect(step.name).toBe('redis');
    const answer = await Promise.resolve(step.provider({ bits: 16 })).catch((e: unknown) => e);
    expect(answer).toBeInstanceOf(NoMachineIdHereError);
    expect(answer).toMatchObject({
      outcome: 'skipped',
      message: 'IDS_REDIS_URL is not set (and no Redis was given)',
    });
  });

  it('a Redis that cannot be reached stops the chain with the typed error', async () => {
    const port = await freePort();
    const notes: string[] = [];
    const answer = await Promise.resolve(
      redisAutoStep({ timeoutMs: 500, env: { IDS_REDIS_URL: `redis://127.0.0.1:${port}` } }).provider({
        bits: 16,
        note: (detail) => notes.push(detail),
      }),
    ).catch((e: unknown) => e);
    expect(answer).toBeInstanceOf(LeaseStoreUnavailableError);
    expect(notes).toEqual([
      expect.stringMatching(/^could not claim a machine ID in Redis at redis:\/\/127\.0\.0\.1:/),
    ]);
  });

  it.skipIf(!hasRedis())('used with IDS_REDIS_URL: a held claim, named in the detail', async () => {
    const redis = await startRedis();
    try {
      const prefix = freshPrefix('auto');
      const notes: string[] = [];
      const claim = await redisAutoStep({
        prefix,
        ttlSeconds: 1,
        fenceMarginMs: 200,
        env: { IDS_REDIS_URL: redis.url },
      }).provider({ bits: 10, note: (detail) => notes.push(detail) });
      expect(notes).toEqual([
        expect.stringMatching(
          new RegExp(`claimed machine ID \\d+ in Redis at redis://127.0.0.1:${redis.port}`),
        ),
      ]);
      if (typeof claim === 'number') throw new Error('expected a claim');
      expect(claim.machineId).toBeLessThan(1024);
      await claim.release();
    } finally {
      await redis.close();
    }
  });
});
