// A Redis that accepts commands and never answers (SIGSTOPped): every exchange of the locks is
// still bounded by timeoutMs, each command from when it was sent, and ends in the typed
// StoreUnavailableError. The bound is one timer per client (CommandDeadlines in redis.ts), not
// one per command, so this also shows that commands sent while that timer waits for an older
// one get their own deadline, and that the client works again once Redis answers.
import { StoreUnavailableError } from '@ids/machine-lease/errors';
import { hasRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import type { Locks } from '../src/index.js';
import { redisLocks } from '../src/redis.js';
import { cleanupAfterEach, failure, redisForSuite, uniqueName } from './helpers.js';

const TIMEOUT_MS = 1000;

/** How long `promise` took to fail, from now, in ms, and its error. */
async function failsAfter(promise: Promise<unknown>): Promise<{ error: Error; ms: number; at: number }> {
  const started = performance.now();
  const error = await failure(promise);
  const at = performance.now();
  return { error, ms: at - started, at };
}

function expectTimedOut(result: { error: Error; ms: number }) {
  expect(result.error).toBeInstanceOf(StoreUnavailableError);
  expect(result.error).toMatchObject({ code: 'ERR_IDS_STORE_UNAVAILABLE', store: 'redis' });
  expect(result.error.message).toMatch(`no answer within ${TIMEOUT_MS} ms`);
  // Not before its own deadline (a timer may fire a little early against performance.now())...
  expect(result.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  // ...and within it, with room for a loaded machine.
  expect(result.ms).toBeLessThan(TIMEOUT_MS + 1500);
}

describe.skipIf(!hasRedis())('Redis that never answers: every command fails typed within timeoutMs', () => {
  const suite = redisForSuite();
  const cleanup = cleanupAfterEach();

  async function open(): Promise<Locks> {
    const prefix = uniqueName('command-timeout');
    await suite.admin.set(`{${prefix}}:epoch`, '0'); // a Redis that forgot nothing: no quarantine
    const locks = await redisLocks({ url: suite.server.url, prefix, timeoutMs: TIMEOUT_MS });
    cleanup.push(() => locks.close());
    return locks;
  }

  it('a take, a single attempt and a release each fail after their own timeoutMs, then all works again', async () => {
    const locks = await open();
    const held = await locks.acquire('held', { ttlMs: 30_000 });
    suite.server.pause();
    let resumed = false;
    try {
      const first = failsAfter(locks.tryAcquire('a'));
      // Sent while the one timer waits for the first command's deadline: its own deadline is later.
      await new Promise((r) => setTimeout(r, 400));
      const second = failsAfter(locks.acquire('b', { waitMs: 0 }));
      const release = failsAfter(held.release());
      const [a, b, r] = await Promise.all([first, second, release]);
      console.log(
        `hung Redis, timeoutMs ${TIMEOUT_MS}: tryAcquire after ${Math.round(a.ms)} ms, acquire({ waitMs: 0 }) after ${Math.round(b.ms)} ms, release after ${Math.round(r.ms)} ms`,
      );
      for (const result of [a, b, r]) expectTimedOut(result);
      // The later commands were not failed with the first (each waited its own timeoutMs).
      expect(b.at - a.at).toBeGreaterThanOrEqual(300);
      suite.server.resume();
      resumed = true;
      // The late answers are ignored; the next commands are answered. (A fresh name: Redis runs
      // the take of 'a' once resumed, so 'a' is held by a token nobody has until its TTL.)
      const lock = await locks.acquire('c', { waitMs: 10_000 });
      expect(lock.fence).toBeGreaterThan(0n);
      await lock.release();
    } finally {
      if (!resumed) suite.server.resume();
    }
  });
});
