// @ids/machine-redis: machine IDs for a fleet through Redis. The only package of @ids that
// depends on a Redis client (ioredis).

// A claim and a provider are machine-lease's types, whatever the store: key and leaseId are
// documented on the provider function.
export { type LeasedClaim, type LeasedMachineIdProvider, RecordedTimeWait } from '@ids/machine-lease';
// The lease errors are one family across stores (`store: 'redis'` here): the very classes
// of @ids/machine-lease, which every store package re-exports.
export * from '@ids/machine-lease/errors';
export { type RedisAutoStepOptions, redisAutoStep } from './auto-step.js';
export {
  DEFAULT_CHECK_KEY,
  type RedisCheckOptions,
  type RedisMachineIdCheck,
  redisCheckMachineId,
} from './check.js';
export {
  type RedisMachineIdOptions,
  redisMachineId,
} from './claim.js';
export { RedisDatabaseError } from './errors.js';
export type { Owner } from './keys.js';
export {
  DEFAULT_REDIS_PREFIX,
  DEFAULT_REDIS_URL,
  type RedisConnectionOptions,
  type RedisLeaseOptions,
} from './options.js';
