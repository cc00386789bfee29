// @ids/machine-etcd: machine IDs for a fleet, held through etcd leases. The only package of
// @ids that depends on etcd3 (and so on gRPC).

// A claim and a provider are machine-lease's types, whatever the store: key and leaseId are
// documented on the provider function.
export { type LeasedClaim, type LeasedMachineIdProvider, RecordedTimeWait } from '@ids/machine-lease';
// The lease errors are one family across stores (`store: 'etcd'` here): the very classes
// of @ids/machine-lease, which every store package re-exports.
export * from '@ids/machine-lease/errors';
// The lease defaults every leased store shares, named here too for etcd's users.
export { DEFAULT_PROBES, DEFAULT_TIMEOUT_MS, DEFAULT_TTL_SECONDS } from '@ids/machine-lease/internal';
export { type EtcdMachineIdCheck, etcdCheckMachineId } from './check.js';
export {
  type EtcdMachineIdOptions,
  etcdMachineId,
} from './claim.js';
export type { Owner } from './keys.js';
export { DEFAULT_ENDPOINT, DEFAULT_PREFIX, type EtcdOptions } from './options.js';
