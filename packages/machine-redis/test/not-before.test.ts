// Issue 22 item 9 on a real Redis: a time recorded ahead of this host's clock (see
// machine-lease/test/not-before.ts for the cases).
import { hasRedis } from '@ids/test-services';
import { describe } from 'vitest';
import { notBeforeCases } from '../../machine-lease/test/not-before.js';
import { LeaseTimeAheadError, RecordedTimeWait, redisMachineId } from '../src/index.js';
import { freshPrefix, redisForSuite } from './helpers.js';

describe.skipIf(!hasRedis())('a recorded time ahead of the clock (Redis)', () => {
  const suite = redisForSuite();
  notBeforeCases({
    prefix: freshPrefix,
    // Called synchronously so that option errors throw where the provider is made.
    claim: (options) => {
      const provider = redisMachineId({ url: suite.server.url, ...options } as never);
      return provider({ bits: 0 });
    },
    setTime: async (prefix, ms) => {
      await suite.admin.set(`{${prefix}}:time:0`, String(ms));
    },
    claimed: async (prefix) => (await suite.admin.exists(`{${prefix}}:0`)) === 1,
    notice: RecordedTimeWait,
    timeAhead: LeaseTimeAheadError,
    name: 'redis',
  });
});
