// @ids/machine-zookeeper/internal: the one ZooKeeper client of @ids (sessions, requests, the
// connect string), for the other packages of @ids that talk to ZooKeeper (@ids/lock, the tests
// and benches). Not API: it may change in any release.
export { type SessionOptions, ZkAnswer, ZkSession } from './client.js';
export { type ConnectString, isPath, parseConnectString, type ZkEndpoint } from './connect-string.js';
export type { CheckOp, CreateOp, MultiOp, NodeKind, NodeStat, SetOp, WatchEvent } from './nodes.js';
