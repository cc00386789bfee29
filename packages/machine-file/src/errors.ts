import { IdsError, InvalidMachineIdError } from '@ids/engine';

/** What an error message shows of a file's content: short, quoted, control characters escaped. */
export function shown(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/** A kept machine-ID file exists but cannot be read (permissions, a directory in its place); `cause` holds the system error. */
export class KeptFileUnreadableError extends IdsError {
  readonly code = 'ERR_IDS_KEPT_FILE_UNREADABLE';
  override readonly name = 'KeptFileUnreadableError';
}

/** A kept machine-ID file holds something other than one decimal integer. It is never replaced silently. */
export class KeptFileCorruptError extends IdsError {
  readonly code = 'ERR_IDS_KEPT_FILE_CORRUPT';
  override readonly name = 'KeptFileCorruptError';
}

/** A kept machine-ID file holds an integer that does not fit the layout's machine field. */
export class KeptIdOutOfRangeError extends InvalidMachineIdError {
  override readonly code = 'ERR_IDS_KEPT_ID_OUT_OF_RANGE';
  override readonly name = 'KeptIdOutOfRangeError';
}

/** No kept file existed and the fallback provider threw (or rejected); `cause` holds its error. Nothing was written. */
export class KeptFallbackError extends IdsError {
  readonly code = 'ERR_IDS_KEPT_FALLBACK';
  override readonly name = 'KeptFallbackError';
}

/**
 * Writing a file failed (an unwritable or missing directory, a full disk, no hard links on the
 * file system); `cause` holds the system error. The temporary file is removed and the target is
 * left as it was.
 */
export class FileWriteError extends IdsError {
  readonly code = 'ERR_IDS_FILE_WRITE';
  override readonly name = 'FileWriteError';
}

/** The claim directory cannot be created or listed, or is not a directory; `cause` holds the system error. */
export class ClaimDirError extends IdsError {
  readonly code: string = 'ERR_IDS_CLAIM_DIR';
  override readonly name: string = 'ClaimDirError';
}

/**
 * The claim directory can be written by other users (by everyone, or it belongs to another
 * user): they could plant or remove claims and make two processes share a machine ID. Refused
 * unless the `allowSharedDir` option accepts it.
 */
export class ClaimDirUnsafeError extends ClaimDirError {
  override readonly code = 'ERR_IDS_CLAIM_DIR_UNSAFE';
  override readonly name = 'ClaimDirUnsafeError';
}

/**
 * A claim file (or a reclaim token) that is not a claim this package wrote: not JSON, or a field
 * missing or of the wrong type (a pid that is not a positive integer, for example). It is never
 * taken over: its machine ID stays unavailable until someone looks at the file.
 */
export class ClaimFileCorruptError extends IdsError {
  readonly code = 'ERR_IDS_CLAIM_FILE_CORRUPT';
  override readonly name = 'ClaimFileCorruptError';
  constructor(
    message: string,
    /** The file that holds the garbage. */
    readonly path: string,
    /** What was expected and what was found, for callers that word their own message. */
    readonly found: string,
  ) {
    super(message);
  }
}

/** Every machine ID in the range is held by a live process (or unusable); the message lists why. */
export class NoFreeMachineIdError extends IdsError {
  readonly code = 'ERR_IDS_NO_FREE_MACHINE_ID';
  override readonly name = 'NoFreeMachineIdError';
}

/** The one machine ID asked for is held by another live process on this host. */
export class MachineIdHeldError extends IdsError {
  readonly code = 'ERR_IDS_MACHINE_ID_HELD';
  override readonly name = 'MachineIdHeldError';
}

/** A held claim was found replaced or removed: the reason its signal aborts, fencing the generator. */
export class ClaimLostError extends IdsError {
  readonly code = 'ERR_IDS_CLAIM_LOST';
  override readonly name = 'ClaimLostError';
}

/**
 * A lock file (see `lockFile`) is held by another live process, or already by this one. Its
 * `pid` and `host` name the holder; `path` is the lock file.
 */
export class LockHeldError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_HELD';
  override readonly name = 'LockHeldError';
  constructor(
    message: string,
    /** The lock file. */
    readonly path: string,
    /** The holder's pid (in its own PID namespace). */
    readonly pid: number,
    /** The holder's host name. */
    readonly host: string,
  ) {
    super(message);
  }
}

/**
 * A lock file that this package did not write: not JSON, a field of the wrong type, a link, a
 * directory or a special file. It is never taken over; `cause` says what was found.
 */
export class LockFileCorruptError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_FILE_CORRUPT';
  override readonly name = 'LockFileCorruptError';
  constructor(
    message: string,
    /** The file that holds the garbage. */
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A held lock file was found replaced or removed: the reason its signal aborts. */
export class LockLostError extends IdsError {
  readonly code = 'ERR_IDS_LOCK_LOST';
  override readonly name = 'LockLostError';
}
