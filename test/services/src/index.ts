/**
 * Real servers for the tests of `@ids` packages that need them. Each starts on a free loopback
 * port in a temporary directory, and everything started is ended when the test process exits.
 * REDIS_URL / DATABASE_URL / MYSQL_URL / ZOOKEEPER_CONNECT point the tests at servers of the user's own instead.
 * Beside them, what tests put between a client and a server: a TCP proxy that cuts the line,
 * and a fake EC2 metadata service; `serverForSuite`, which holds one of them for the tests
 * of a describe block; and `gate`, a promise a test opens when it chooses. A private package: none of this ships in a tarball.
 */

export { type EtcdCluster, type EtcdMember, hasEtcd, type StartEtcdOptions, startEtcd } from './etcd.js';
export { type Gate, gate } from './gate.js';
export { closedLoopbackEndpoint, type ImdsMode, type ImdsTestServer, startImdsTestServer } from './imds.js';
export { hasMariadb, type MariadbServer, type StartMariadbOptions, startMariadb } from './mariadb.js';
export {
  hasPostgres,
  type PostgresServer,
  postgresBinDir,
  type StartPostgresOptions,
  startPostgres,
} from './postgres.js';
export { accepts, freePort } from './process.js';
export { type ProxyMode, TcpProxy } from './proxy.js';
export { markdownTable, readmeSection, withSection } from './readme.js';
export { hasRedis, type RedisServer, type StartRedisOptions, startRedis } from './redis.js';
export { type StoreServerKind, storeServers } from './stores.js';
export { type SuiteServer, type SuiteServerOptions, serverForSuite, tempDirs } from './suite.js';
export { hasOpenssl, selfSignedTls, type TestTls } from './tls.js';
export {
  fourLetters,
  hasZookeeper,
  type StartEnsembleOptions,
  type StartZookeeperOptions,
  startZookeeper,
  startZookeeperEnsemble,
  type ZookeeperEnsemble,
  type ZookeeperServer,
  type ZookeeperStandalone,
} from './zookeeper.js';
