// @ids/machine-zookeeper: machine IDs for a fleet through ZooKeeper sessions, and Meituan Leaf's
// worker IDs taken over. The only package of @ids that depends on a ZooKeeper client
// (node-zookeeper-client, wrapped in client.ts, nodes.ts and connection.ts).

// A claim and a provider are machine-lease's types, whatever the store: key and leaseId are
// documented on the provider function.
export { type LeasedClaim, type LeasedMachineIdProvider, RecordedTimeWait } from '@ids/machine-lease';
// The lease errors are one family across stores (`store: 'zookeeper'` here): the very classes
// of @ids/machine-lease, which every store package re-exports.
export * from '@ids/machine-lease/errors';
export {
  DEFAULT_CHECK_PATH,
  type ZookeeperCheckOptions,
  type ZookeeperMachineIdCheck,
  zookeeperCheckMachineId,
} from './check.js';
export {
  type ZookeeperMachineIdOptions,
  zookeeperMachineId,
} from './claim.js';
export { ZookeeperChrootError, ZookeeperLeafWorkerError } from './errors.js';
export { type LeafWorker, type LeafWorkerOptions, leafForeverPath, readLeafWorker } from './leaf.js';
export {
  DEFAULT_ZOOKEEPER_CONNECT,
  DEFAULT_ZOOKEEPER_PATH,
  type ZookeeperConnectionOptions,
  type ZookeeperLeaseOptions,
} from './options.js';
