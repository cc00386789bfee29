// Kleppmann's case: a holder paused (SIGSTOP) past its TTL. The next holder gets a higher fence;
// the paused one, resumed, finds its signal aborted and its late guarded write refused.

import { describe, expect, it } from 'vitest';
import { redisLocks } from '../src/redis.js';
import { pausedHolderFenced } from './cases.js';
import { redisForSuite, uniqueName } from './helpers.js';

describe('a holder paused past its TTL (Redis)', () => {
  const suite = redisForSuite();

  it('the next holder has a higher fence; the resumed holder is aborted and its write refused', async () => {
    const prefix = uniqueName('fencing');
    const held = async () => suite.admin.exists(`{${prefix}}:held:orders:42`);
    // The next acquire waits, event-driven, until the paused holder's key expires (its TTL, on
    // Redis's clock). Redis guards its own lock's resource here.
    await pausedHolderFenced({
      store: 'redis',
      endpoint: suite.server.url,
      prefix,
      guard: suite,
      open: () => redisLocks({ url: suite.server.url, prefix }),
      kinds: 'deadline|key-lost|keepalive-failed',
      // The resumed holder released its lock on the way out: a compare-and-delete that left the
      // next holder's lock alone.
      nextAlone: async () => expect(await held()).toBe(1),
    });
    expect(await held()).toBe(0);
  });
});
