import { IdsError } from '@ids/engine';

/** `acquire` waited `waitMs` and the lock was still held by someone else. */
export class LockTimeoutError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_TIMEOUT';
  override readonly name = 'LockTimeoutError';
  constructor(
    /** The lock's name. */
    readonly lockName: string,
    /** How long it waited, in ms. */
    readonly waitMs: number,
  ) {
    super(
      `the lock ${JSON.stringify(lockName)} was still held by another holder after waitMs = ${waitMs} ms`,
    );
  }
}

/** The `signal` given to `acquire` aborted while it waited; `cause` is the signal's reason. */
export class LockAbortedError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_ABORTED';
  override readonly name = 'LockAbortedError';
}

/** A lock used after `release()`: its fence no longer protects anything. */
export class LockReleasedError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_RELEASED';
  override readonly name = 'LockReleasedError';
}

/** Two fences of different lock names compared: they count on separate counters. */
export class FenceMismatchError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_FENCE_NAMES';
  override readonly name = 'FenceMismatchError';
}
