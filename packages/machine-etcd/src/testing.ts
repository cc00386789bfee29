// @ids/machine-etcd/testing: a real etcd for tests (single node or a loopback cluster, which
// can be stopped, killed and restarted) and a TCP proxy to partition a client from it. No gRPC.
export {
  type EtcdCluster,
  type EtcdMember,
  freePort,
  type StartEtcdOptions,
  startEtcd,
} from './testing/etcd.js';
export { type ProxyMode, TcpProxy } from './testing/proxy.js';
