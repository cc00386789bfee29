// @ids/machine-lease/internal: plumbing the store packages of @ids share (option checks, call
// time limits, claim values, the keeper for a check that holds a lease without a holder). Not
// API: it may change in any release without notice. Store authors start from '@ids/machine-lease'.

export { bounded, StoreTimeout } from './bounded.js';
export { checkTimeoutOption, storeCheck } from './check.js';
export { type KeeperTiming, LeaseKeeper, realScheduler, type Scheduler, schedulerOf } from './keeper.js';
export { grantLease, type Lease } from './lease.js';
export {
  type CheckedLeaseOptions,
  checkLeaseOptions,
  checkOptionsObject,
  DEFAULT_PROBES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TTL_SECONDS,
  readRecordedTime,
} from './options.js';
export { currentOwner, type Owner, readOwner } from './owner.js';
export type { Granted, LeaseLossKind, Watch } from './store.js';
