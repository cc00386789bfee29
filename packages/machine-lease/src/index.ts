// @ids/machine-lease: the lease holder behind every leased machine-ID provider (etcd, Redis,
// ZooKeeper), written once against a small LeaseStore interface. No I/O of its own and no
// dependency but @ids/engine: each store package brings its client. This entry is the face for
// store authors. The one family of lease errors is '@ids/machine-lease/errors' (each store
// package re-exports it whole, so users catch them from the store they use); the plumbing the
// store packages share is in '@ids/machine-lease/internal'.
export type { StoreCheckOptions, StoreMachineIdCheck } from './check.js';
export type { LeasedClaim } from './claim.js';
export { RecordedTimeWait } from './not-before.js';
export type { HolderOptions, LeaseOptions } from './options.js';
export { type LeasedMachineIdProvider, leasedMachineId } from './provider.js';
export type { Attempt, LeaseStore } from './store.js';
