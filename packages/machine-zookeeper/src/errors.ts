import { IdsError } from '@ids/engine';

// What ZooKeeper itself reports (unavailable, refused, lease lost, space full, a corrupt node,
// ...) is one of the lease errors of @ids/machine-lease, re-exported by this package, with
// `store: 'zookeeper'`; an option that cannot work is the engine's InvalidArgumentError naming
// it. Only what has no counterpart elsewhere has a class here.

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
