import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import type { LeaseOptions } from '@ids/machine-lease';
import { type CheckedLeaseOptions, checkLeaseOptions, checkOptionsObject } from '@ids/machine-lease/internal';
import { type ConnectString, isPath, parseConnectString } from './connect-string.js';

/** Where claims live when no path is given. */
export const DEFAULT_ZOOKEEPER_PATH = '/ids/machine-id';
/** The local default ZooKeeper. */
export const DEFAULT_ZOOKEEPER_CONNECT = '127.0.0.1:2181';

/** How to reach ZooKeeper and where the claims live. */
export interface ZookeeperConnectionOptions {
  /**
   * `host:port[,host:port...][/chroot]`, every server with its port. Default: the
   * `IDS_ZOOKEEPER_CONNECT` environment variable, else `127.0.0.1:2181`. A chroot that does not
   * exist is ZookeeperChrootError (the server would otherwise fail each request).
   */
  readonly connect?: string;
  /**
   * The base path B: claims are `B/claims/<id>` (ephemeral), recorded times `B/times/<id>`.
   * Created when missing. Default `/ids/machine-id`.
   */
  readonly path?: string;
}

/**
 * The options of zookeeperMachineId: how to reach ZooKeeper and hold a claim there. The lease
 * is the ZooKeeper session: `ttlSeconds` is the session timeout asked for (the server grants
 * one between its minSessionTimeout and maxSessionTimeout, by default 2 and 20 ticks; a
 * shorter grant is believed).
 */
export interface ZookeeperLeaseOptions extends ZookeeperConnectionOptions, LeaseOptions {}

/** Validated connection and lease settings. */
export interface CheckedZookeeperOptions extends CheckedLeaseOptions {
  readonly connect: ConnectString;
  readonly path: string;
}

/** Checks the connect string and path (defaults filled in). @throws InvalidArgumentError */
export function checkConnection(
  o: ZookeeperConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
): { connect: ConnectString; path: string } {
  const connect = parseConnectString(o.connect ?? env.IDS_ZOOKEEPER_CONNECT ?? DEFAULT_ZOOKEEPER_CONNECT);
  const path = o.path ?? DEFAULT_ZOOKEEPER_PATH;
  if (typeof path !== 'string' || path === '/' || !isPath(path) || path.length > 200) {
    throw new InvalidArgumentError(
      `expected an absolute ZooKeeper path like /ids/machine-id (no trailing slash, no empty segment, at most 200 characters, not the root), received ${received(path)}`,
      { option: 'path' },
    );
  }
  return { connect, path };
}

/** Validates every option of zookeeperMachineId. @throws InvalidArgumentError naming the option. */
export function checkZookeeperOptions(o: ZookeeperLeaseOptions): CheckedZookeeperOptions {
  checkOptionsObject(o);
  const connection = checkConnection(o);
  const lease = checkLeaseOptions(o);
  return { ...lease, ...connection };
}
