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

/** Every machine ID in the range is held by a live process (or unusable); the message lists why. */
export class NoFreeMachineIdError extends IdsError {
  readonly code = 'ERR_IDS_NO_FREE_MACHINE_ID';
  override readonly name = 'NoFreeMachineIdError';
}

/**
 * What the errors of a held file have: a host claim (`hostClaim`) and a lock file (`lockFile`)
 * are one kind of file, taken, renewed and lost the same way (see HeldFile). `path` names the
 * file; the message says whether it is a claim (its machine ID) or a lock (what it guards).
 */
export abstract class HeldFileError extends IdsError {
  constructor(
    message: string,
    /** The claim file or lock file. */
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A claim file, a lock file or a takeover token that this package did not write: not JSON, a
 * field missing or of the wrong type (a pid that is not a positive integer, say), a link, a
 * directory or a special file. It is never taken over: a claim's machine ID stays unavailable,
 * a lock stays unavailable, until someone looks at the file.
 */
export class HeldFileCorruptError extends HeldFileError {
  readonly code = 'ERR_IDS_HELD_FILE_CORRUPT';
  override readonly name = 'HeldFileCorruptError';
  constructor(
    message: string,
    path: string,
    /** What was expected and what was found, for callers that word their own message. */
    readonly found: string,
    options?: ErrorOptions,
  ) {
    super(message, path, options);
  }
}

/**
 * The file is held by another live process: the one machine ID asked for (`min === max`), or a
 * lock file (by this process too: a lock is held once). `pid` and `host` name the holder (0 and
 * '' when the refusal came from no holding, such as a takeover under way).
 */
export class HeldFileInUseError extends HeldFileError {
  readonly code = 'ERR_IDS_HELD_FILE_IN_USE';
  override readonly name = 'HeldFileInUseError';
  constructor(
    message: string,
    path: string,
    /** The holder's pid (in its own PID namespace). */
    readonly pid: number,
    /** The holder's host name. */
    readonly host: string,
  ) {
    super(message, path);
  }
}

/**
 * A held claim or lock file was found replaced or removed (or a lock used after its release):
 * the reason its holder's signal aborts, which fences a generator on a claim.
 */
export class HeldFileLostError extends HeldFileError {
  readonly code = 'ERR_IDS_HELD_FILE_LOST';
  override readonly name = 'HeldFileLostError';
}
