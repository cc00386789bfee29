// @ids/lock: named locks with fences on the @ids lease machinery, guards for the protected
// resource, and idempotency keys. The stores are entry points of their own (`@ids/lock/redis`,
// `@ids/lock/etcd`, `@ids/lock/zookeeper`), so that importing this one loads no client.

// The lease errors a lock can throw (the store down or refusing, a lock lost) are the one family
// of @ids/machine-lease, re-exported whole, so a lock user imports nothing from machine-ID packages.
export * from '@ids/machine-lease/errors';
export type { LockBackend, Taken } from './backend.js';
export {
  FenceMismatchError,
  LockAbortedError,
  LockReleasedError,
  LockTimeoutError,
} from './errors.js';
export { type EvalClient, FENCED_SET, fencedSet } from './guard.js';
export {
  fingerprint,
  type IdempotencyOptions,
  type IdempotentResponse,
  idempotencyKeys,
  type RecordClient,
  type StoredResponse,
} from './idempotency.js';
export { compareFences, type Fenced, Lock } from './lock.js';
export { Locks } from './locks.js';
export {
  type AcquireOptions,
  DEFAULT_TTL_MS,
  MAX_NAME_BYTES,
  MIN_TTL_MS,
  NAME_REFUSED,
  NAME_RESERVED,
  NAME_SEPARATOR,
  nameRuleText,
  type RefusedRange,
} from './options.js';
