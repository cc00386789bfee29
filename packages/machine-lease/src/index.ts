// @ids/machine-lease: the lease holder behind every leased machine-ID provider (etcd, Redis),
// written once against a small LeaseStore interface. No I/O of its own and no dependency but
// @ids/engine: each store package brings its client.
export { type AllocateOptions, allocate, listTaken } from './allocate.js';
export { bounded, StoreTimeout } from './bounded.js';
export {
  type CheckedHolderOptions,
  Holder,
  type LeasedClaim,
  RecordedTimeWait,
} from './holder.js';
export {
  type Keepalive,
  type KeeperTiming,
  LeaseKeeper,
  realScheduler,
  type Scheduler,
  schedulerOf,
} from './keeper.js';
export { grantLease, keepLease, type Lease, type LeaseTiming } from './lease.js';
export {
  type CheckedHolderChoices,
  type CheckedLeaseOptions,
  checkAskedId,
  checkLeaseOptions,
  DEFAULT_PROBES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TTL_SECONDS,
  type HolderOptions,
  holderOptions,
  integer,
  type LeaseOptions,
  MAX_TIMER_MS,
  ms,
  NOT_BEFORE_WAIT_SLACK_MS,
  type OptionError,
  readRecordedTime,
  recordedTime,
} from './options.js';
export { currentOwner, type Owner, readOwner } from './owner.js';
export type {
  Attempt,
  Granted,
  LeaseErrors,
  LeaseLossKind,
  LeaseLost,
  LeaseStore,
  Watch,
} from './store.js';
