import { IdsError } from '@ids/engine';
import type { LeaseErrors, LeaseLossKind } from '@ids/machine-lease';

export type { LeaseLossKind };

/** An option of redisMachineId / redisCheckMachineId that cannot work; `option` names it. */
export class RedisOptionError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_OPTION';
  override readonly name = 'RedisOptionError';
  constructor(
    /** The option at fault: 'url', 'prefix', 'key', 'ttlSeconds', ... */
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}

/**
 * Redis did not answer: nothing listening, no reply within `timeoutMs`, or the connection is
 * down and being re-established. Waiting may help. `cause` holds the client's error.
 */
export class RedisUnavailableError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_UNAVAILABLE';
  override readonly name = 'RedisUnavailableError';
}

/**
 * Redis answered with an error that waiting will not fix: a wrong password or user (WRONGPASS,
 * NOAUTH), a missing permission (NOPERM), a TLS certificate that does not verify. `cause`
 * holds it.
 */
export class RedisRequestError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_REQUEST';
  override readonly name = 'RedisRequestError';
}

/**
 * The database a URL names cannot be selected: the server has fewer (its `databases` setting),
 * or refuses SELECT. Waiting will not fix it.
 */
export class RedisDatabaseError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_DATABASE';
  override readonly name = 'RedisDatabaseError';
  constructor(
    /** The database asked for. */
    readonly database: number,
    /** How many databases the server has (0 to this minus 1), when it said. */
    readonly databases: number | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A key under the prefix that this package did not write: its value is not a claim, a time or an ID. */
export class RedisCorruptClaimError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_CORRUPT_KEY';
  override readonly name = 'RedisCorruptClaimError';
  constructor(
    /** The Redis key at fault, e.g. `{ids:machine-id}:7`. */
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

/** The machine field's width does not match: the `bits` option, or a claim wider than the field. */
export class RedisBitsMismatchError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_BITS_MISMATCH';
  override readonly name = 'RedisBitsMismatchError';
}

/** Every machine ID of the field is held by a live claim. */
export class RedisSpaceFullError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_SPACE_FULL';
  override readonly name = 'RedisSpaceFullError';
}

/**
 * The time recorded for the claimed ID lies further ahead of this host's clock than
 * `maxNotBeforeWaitMs`: the claim was given up rather than waited for.
 */
export class RedisRecordedTimeAheadError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_TIME_AHEAD';
  override readonly name = 'RedisRecordedTimeAheadError';
}

/**
 * The claim behind a generator can no longer be trusted: the generator stops issuing IDs (it
 * reports MachineIdLostError with this as `cause`) until the claim is renewed.
 */
export class RedisLeaseLostError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_LEASE_LOST';
  override readonly name = 'RedisLeaseLostError';
  constructor(
    /** Why the claim stopped being trusted. */
    readonly kind: LeaseLossKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** How the lease holder names Redis's failures: with this package's classes and codes. */
export const redisErrors: LeaseErrors = {
  lost: (kind, message, options) => new RedisLeaseLostError(kind, message, options),
  isLost: (error): error is RedisLeaseLostError => error instanceof RedisLeaseLostError,
  unavailable: (message, options) => new RedisUnavailableError(message, options),
  spaceFull: (message) => new RedisSpaceFullError(message),
  timeAhead: (message) => new RedisRecordedTimeAheadError(message),
  bitsMismatch: (message) => new RedisBitsMismatchError(message),
  option: (option, message) => new RedisOptionError(option, message),
  transient: (error) =>
    error instanceof RedisUnavailableError ||
    error instanceof RedisLeaseLostError ||
    error instanceof RedisSpaceFullError,
};
