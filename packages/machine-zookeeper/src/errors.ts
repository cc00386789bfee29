import { IdsError } from '@ids/engine';

// What ZooKeeper itself reports (unavailable, refused, lease lost, space full, a corrupt node,
// ...) is one of the lease errors of @ids/machine-lease, re-exported by this package, with
// `store: 'zookeeper'`. Only what has no counterpart in another store has a class here.

/** An option of zookeeperMachineId / zookeeperCheckMachineId that cannot work; `option` names it. */
export class ZookeeperOptionError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_OPTION';
  override readonly name = 'ZookeeperOptionError';
  constructor(
    /** The option at fault: 'connect', 'path', 'ttlSeconds', ... */
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}

/** The chroot of the connect string (`host:port/chroot`) does not exist on the server. */
export class ZookeeperChrootError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_CHROOT';
  override readonly name = 'ZookeeperChrootError';
  constructor(
    /** The chroot asked for, e.g. `/apps/ids`. */
    readonly chroot: string,
    message: string,
  ) {
    super(message);
  }
}

/** Leaf's `forever` tree has no worker for the ip:port asked for (or no tree at all). */
export class ZookeeperLeafWorkerError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_LEAF_WORKER';
  override readonly name = 'ZookeeperLeafWorkerError';
}
