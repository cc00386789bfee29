import { IdsError } from '@ids/engine';
import type { LeaseErrors, LeaseLossKind } from '@ids/machine-lease';

export type { LeaseLossKind };

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

/**
 * ZooKeeper did not answer: nothing listening, no session within `timeoutMs`, no reply within
 * it, or the connection is down and being re-established. Waiting may help. `cause` holds the
 * client's error when there is one.
 */
export class ZookeeperUnavailableError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_UNAVAILABLE';
  override readonly name = 'ZookeeperUnavailableError';
}

/**
 * ZooKeeper answered with an error that waiting will not fix: no permission (an ACL), a path the
 * server refuses. `zkCode` is the server's name for it (`NO_AUTH`, ...).
 */
export class ZookeeperRequestError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_REQUEST';
  override readonly name = 'ZookeeperRequestError';
  constructor(
    /** ZooKeeper's name of the error, e.g. `NO_AUTH`. */
    readonly zkCode: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
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

/** A node under the path that this package did not write: its data or kind is not a claim, a time or an ID. */
export class ZookeeperCorruptNodeError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_CORRUPT_NODE';
  override readonly name = 'ZookeeperCorruptNodeError';
  constructor(
    /** The node at fault, e.g. `/ids/machine-id/claims/7`. */
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** The machine field's width does not match: the `bits` option, or a claim wider than the field. */
export class ZookeeperBitsMismatchError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_BITS_MISMATCH';
  override readonly name = 'ZookeeperBitsMismatchError';
}

/** Every machine ID of the field is held by a live session. */
export class ZookeeperSpaceFullError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_SPACE_FULL';
  override readonly name = 'ZookeeperSpaceFullError';
}

/**
 * The time recorded for the claimed ID lies further ahead of this host's clock than
 * `maxNotBeforeWaitMs`: the claim was given up rather than waited for.
 */
export class ZookeeperRecordedTimeAheadError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_TIME_AHEAD';
  override readonly name = 'ZookeeperRecordedTimeAheadError';
}

/**
 * The claim behind a generator can no longer be trusted (its session expired, or may have):
 * the generator stops issuing IDs (it reports MachineIdLostError with this as `cause`) until
 * the claim is renewed.
 */
export class ZookeeperLeaseLostError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_LEASE_LOST';
  override readonly name = 'ZookeeperLeaseLostError';
  constructor(
    /** Why the claim stopped being trusted. */
    readonly kind: LeaseLossKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** How the lease holder names ZooKeeper's failures: with this package's classes and codes. */
export const zookeeperErrors: LeaseErrors = {
  lost: (kind, message, options) => new ZookeeperLeaseLostError(kind, message, options),
  isLost: (error): error is ZookeeperLeaseLostError => error instanceof ZookeeperLeaseLostError,
  unavailable: (message, options) => new ZookeeperUnavailableError(message, options),
  spaceFull: (message) => new ZookeeperSpaceFullError(message),
  timeAhead: (message) => new ZookeeperRecordedTimeAheadError(message),
  bitsMismatch: (message) => new ZookeeperBitsMismatchError(message),
  option: (option, message) => new ZookeeperOptionError(option, message),
  transient: (error) =>
    error instanceof ZookeeperUnavailableError ||
    error instanceof ZookeeperLeaseLostError ||
    error instanceof ZookeeperSpaceFullError,
};

/** Leaf's `forever` tree has no worker for the ip:port asked for (or no tree at all). */
export class ZookeeperLeafWorkerError extends IdsError {
  readonly code = 'ERR_IDS_ZOOKEEPER_LEAF_WORKER';
  override readonly name = 'ZookeeperLeafWorkerError';
}
