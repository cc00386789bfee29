// "A Redis that forgets", on an injected clock: an ID whose recorded time is unknown is held but
// not handed to the generator until one full TTL has passed; a known past costs no wait.
import { hasRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { FakeScheduler } from '../../machine-lease/test/fake-scheduler.js';
import { type LeasedClaim, redisMachineId } from '../src/index.js';
import { freshPrefix, redisForSuite, sleep } from './helpers.js';

describe.skipIf(!hasRedis())('the unknown-past rule', () => {
  const suite = redisForSuite();

  it('no recorded time: the claim is held at once, handed out only after one TTL of fake time, and records now + TTL', async () => {
    const scheduler = new FakeScheduler();
    const prefix = freshPrefix('quarantine');
    const provider = redisMachineId({
      url: suite.server.url,
      prefix,
      ttlSeconds: 10,
      scheduler,
    } as Parameters<typeof redisMachineId>[0]);
    const before = Date.now();
    let claim: LeasedClaim | undefined;
    const pending = provider({ bits: 0 }).then((c) => {
      claim = c;
    });
    // The key is taken at once (nobody else can claim the ID meanwhile)...
    for (let i = 0; i < 200 && (await suite.admin.exists(`{${prefix}}:0`)) === 0; i++) await sleep(10);
    expect(await suite.admin.exists(`{${prefix}}:0`)).toBe(1);
    const recorded = Number(await suite.admin.get(`{${prefix}}:time:0`));
    expect(recorded).toBeGreaterThanOrEqual(before + 10_000);
    // ...but not handed out before a full TTL of (fake) time.
    // Fake time in steps, with real time between them for the keepalives' real round trips.
    for (let t = 0; t < 9_999; t += 500) {
      await scheduler.advance(Math.min(500, 9_999 - t));
      await sleep(20);
    }
    expect(claim).toBeUndefined();
    await scheduler.advance(1);
    await pending;
    expect(claim?.machineId).toBe(0);
    expect(claim?.notBefore).toBe(recorded);
    await claim?.release();
  });

  it('a recorded time in the past: handed out at once', async () => {
    const scheduler = new FakeScheduler();
    const prefix = freshPrefix('known');
    await suite.admin.set(`{${prefix}}:time:0`, String(Date.now() - 60_000));
    const claim = await redisMachineId({ url: suite.server.url, prefix, scheduler } as Parameters<
      typeof redisMachineId
    >[0])({
      bits: 0,
    });
    expect(scheduler.pending).toBeGreaterThan(0); // keepalive and watchdog only
    expect(scheduler.requested.every((ms) => ms !== 10_000)).toBe(true);
    await claim.release();
  });
});
