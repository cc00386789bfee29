// @ids/machine-zookeeper/internal: the one ZooKeeper client of @ids (sessions, requests, the
// connect string), for the other packages of @ids that talk to ZooKeeper (@ids/lock, the tests
// and benches). Not API: it may change in any release.
export {
  type CheckOp,
  type CreateOp,
  type MultiOp,
  type NodeKind,
  type NodeStat,
  type SessionOptions,
  type SetOp,
  type WatchEvent,
  ZkAnswer,
  ZkSession,
} from './client.js';
export { type ConnectString, isPath, parseConnectString, type ZkEndpoint } from './connect-string.js';
