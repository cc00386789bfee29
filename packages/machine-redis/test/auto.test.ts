// The `auto` chain's Redis step: skipped without a URL, used with one, and stopping the chain
// (not falling through to a host-derived ID) when the Redis asked for cannot be used.
import { freePort, hasRedis, startRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseStoreUnavailableError, redisAutoStep } from '../src/index.js';
import { freshPrefix } from './helpers.js';

describe('redisAutoStep', () => {
  it('skipped when neither the option nor IDS_REDIS_URL is given', async () => {
    const step = redisAutoStep();
    expect(step.name).toBe('redis');
    expect(await step.run({ bits: 16, env: {} })).toEqual({
      outcome: 'skipped',
      detail: 'IDS_REDIS_URL is not set (and no Redis was given)',
    });
  });

  it('a Redis that cannot be reached stops the chain with the typed error as its cause', async () => {
    const port = await freePort();
    const answer = await redisAutoStep({ timeoutMs: 500 }).run({
      bits: 16,
      env: { IDS_REDIS_URL: `redis://127.0.0.1:${port}` },
    });
    expect(answer.outcome).toBe('failed');
    expect(answer.outcome === 'failed' && answer.stop).toBeInstanceOf(LeaseStoreUnavailableError);
  });

  it.skipIf(!hasRedis())('used with IDS_REDIS_URL: a held claim, named in the detail', async () => {
    const redis = await startRedis();
    try {
      const prefix = freshPrefix('auto');
      const answer = await redisAutoStep({ prefix, ttlSeconds: 1, fenceMarginMs: 200 }).run({
        bits: 10,
        env: { IDS_REDIS_URL: redis.url },
      });
      expect(answer.outcome).toBe('used');
      if (answer.outcome !== 'used') return;
      expect(answer.detail).toMatch(
        new RegExp(`claimed machine ID \\d+ in Redis at redis://127.0.0.1:${redis.port}`),
      );
      expect(answer.machineId.machineId).toBeLessThan(1024);
      await answer.machineId.release();
    } finally {
      await redis.close();
    }
  });
});
