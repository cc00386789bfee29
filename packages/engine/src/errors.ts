/**
 * One class per failure. Each has a stable `code` (match on it, not on the message), a `name`
 * equal to the class name, and a message saying what failed, what was expected and what was
 * received. Errors that wrap another carry it as `cause`.
 *
 * Where Go's sony/sonyflake has a sentinel error, the class says which one in its TSDoc, so a
 * port from Go can map `errors.Is(err, ErrX)` to `err instanceof XError`.
 */
export abstract class IdsError extends Error {
  /** Stable across versions (`ERR_IDS_...`), unlike the message: match on it. */
  abstract readonly code: string;
}

/** Describes a received value for an error message: its value and its type. */
export function received(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n (bigint)`;
  if (typeof value === 'string')
    return `${JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value)} (string)`;
  if (typeof value === 'number') return `${value} (number)`;
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (value instanceof Date)
    return `${Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString()} (Date)`;
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return `a value of type ${typeof value}`;
}

/**
 * A layout that cannot work: field sizes out of range or not fitting 63 bits together, a time
 * unit or start time (epoch) that is not one. The failures Go names one by one are the
 * subclasses below, each with its own code: `instanceof InvalidLayoutError` catches them all.
 */
export class InvalidLayoutError extends IdsError {
  readonly code: string = 'ERR_IDS_INVALID_LAYOUT';
  override readonly name: string = 'InvalidLayoutError';
}

/** Go: ErrInvalidBitsSequence ("invalid bit length for sequence number"). */
export class InvalidBitsSequenceError extends InvalidLayoutError {
  override readonly code = 'ERR_IDS_BITS_SEQUENCE';
  override readonly name = 'InvalidBitsSequenceError';
}

/** Go: ErrInvalidBitsMachineID ("invalid bit length for machine id"). */
export class InvalidBitsMachineIdError extends InvalidLayoutError {
  override readonly code = 'ERR_IDS_BITS_MACHINE_ID';
  override readonly name = 'InvalidBitsMachineIdError';
}

/** Go: ErrInvalidBitsTime ("bit length for time must be 32 or more"). */
export class InvalidBitsTimeError extends InvalidLayoutError {
  override readonly code = 'ERR_IDS_BITS_TIME';
  override readonly name = 'InvalidBitsTimeError';
}

/** Go: ErrInvalidTimeUnit ("invalid time unit"). */
export class InvalidTimeUnitError extends InvalidLayoutError {
  override readonly code = 'ERR_IDS_TIME_UNIT';
  override readonly name = 'InvalidTimeUnitError';
}

/** A start time (epoch) that is not a valid instant: an Invalid Date, NaN, or not a Date or number. */
export class InvalidStartTimeError extends InvalidLayoutError {
  override readonly code = 'ERR_IDS_START_TIME';
  override readonly name = 'InvalidStartTimeError';
}

/**
 * Go: ErrStartTimeAhead. At construction: the start time is after the clock's now. In compose:
 * the time given is before the start time.
 */
export class StartTimeAheadError extends IdsError {
  readonly code = 'ERR_IDS_START_TIME_AHEAD';
  override readonly name = 'StartTimeAheadError';
}

/** Go: ErrInvalidMachineID for a machine ID that is not an integer in [0, 2^machineBits). */
export class InvalidMachineIdError extends IdsError {
  readonly code: string = 'ERR_IDS_MACHINE_ID';
  override readonly name: string = 'InvalidMachineIdError';
}

/** Go: ErrInvalidMachineID returned because `checkMachineId` answered false. */
export class MachineIdRejectedError extends InvalidMachineIdError {
  override readonly code = 'ERR_IDS_MACHINE_ID_REJECTED';
  override readonly name = 'MachineIdRejectedError';
}

/** The machine-ID provider threw or rejected; its error is the `cause` (Go passes it through). */
export class MachineIdProviderError extends IdsError {
  readonly code = 'ERR_IDS_MACHINE_ID_PROVIDER';
  override readonly name = 'MachineIdProviderError';
}

/** Go: ErrInvalidSequence, from compose: a sequence outside [0, 2^sequenceBits). */
export class InvalidSequenceError extends IdsError {
  readonly code = 'ERR_IDS_SEQUENCE';
  override readonly name = 'InvalidSequenceError';
}

/**
 * Go: ErrOverTimeLimit: the time field no longer fits its bits (the layout's lifetime is over).
 * A generator that failed with it keeps failing with it, as Go's does.
 */
export class OverTimeLimitError extends IdsError {
  readonly code = 'ERR_IDS_OVER_TIME_LIMIT';
  override readonly name = 'OverTimeLimitError';
}

/**
 * The clock is behind the last tick this generator used by more than `maxClockBackwardMs`.
 * Go would sleep for the whole step back (sony/sonyflake issue #39); we fail instead.
 */
export class ClockMovedBackwardsError extends IdsError {
  readonly code = 'ERR_IDS_CLOCK_BACKWARDS';
  override readonly name = 'ClockMovedBackwardsError';
  constructor(
    message: string,
    /** How far, in ms, the clock was behind the tick the generator must use next. */
    readonly behindMs: number,
  ) {
    super(message);
  }
}

/** The clock did not advance while a generator slept until the next tick (a frozen or broken clock). */
export class ClockStalledError extends IdsError {
  readonly code = 'ERR_IDS_CLOCK_STALLED';
  override readonly name = 'ClockStalledError';
}

/** An ID that is not a bigint or decimal string in [0, 2^63 - 1], or does not fit the layout. */
export class InvalidIdError extends IdsError {
  readonly code = 'ERR_IDS_INVALID_ID';
  override readonly name = 'InvalidIdError';
}

/** Text that several encodings read as different IDs (for example short base36 and bwmarrin base32). */
export class AmbiguousIdError extends IdsError {
  readonly code = 'ERR_IDS_AMBIGUOUS_ID';
  override readonly name = 'AmbiguousIdError';
  constructor(
    message: string,
    /** Each encoding that reads the text, with the ID it reads (one per distinct ID). */
    readonly candidates: readonly {
      /** The encoding's name, as `decodeId` takes it. */
      readonly encoding: string;
      /** The ID the text is in that encoding. */
      readonly id: bigint;
    }[],
  ) {
    super(message);
  }
}

/**
 * An argument, option or setting that cannot work (the wrong type, out of range, or refused by
 * the server it is for), where no more specific class applies. Every package raises this one
 * class for its options: `option` names the one at fault when the thrower knows it.
 */
export class InvalidArgumentError extends IdsError {
  readonly code = 'ERR_IDS_INVALID_ARGUMENT';
  override readonly name = 'InvalidArgumentError';
  /** The option or argument at fault ('ttlSeconds', 'connect', 'leaf.port', ...), which also starts the message. */
  readonly option: string | undefined;
  constructor(message: string, options?: ErrorOptions & { readonly option?: string }) {
    super(options?.option === undefined ? message : `${options.option}: ${message}`, options);
    this.option = options?.option;
  }
}

/** A synchronous path was given something only the asynchronous one can run (a Promise). */
export class AsyncSettingError extends IdsError {
  readonly code = 'ERR_IDS_ASYNC_SETTING';
  override readonly name = 'AsyncSettingError';
}

/** The generator's machine-ID claim was lost (fenced): it issues no IDs until it holds one again. */
export class MachineIdLostError extends IdsError {
  readonly code = 'ERR_IDS_MACHINE_ID_LOST';
  override readonly name = 'MachineIdLostError';
}

/** The generator was closed. */
export class GeneratorClosedError extends IdsError {
  readonly code = 'ERR_IDS_CLOSED';
  override readonly name = 'GeneratorClosedError';
}

/**
 * A feature was configured whose package is not installed (stores' clients are optional peer
 * dependencies, installed only by their users). The message names what to install.
 */
export class MissingPackageError extends IdsError {
  readonly code = 'ERR_IDS_MISSING_PACKAGE';
  override readonly name = 'MissingPackageError';
  constructor(
    message: string,
    /** The packages to install, the one that failed to load first. */
    readonly packages: readonly string[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A store did not answer: nothing listening, no reply within the caller's `timeoutMs`, a
 * connection down and being re-established, a client's circuit breaker open. Waiting may help.
 * One class for every store and every feature that uses one, so a caller catches "the store is
 * away" once and reads `store` and `feature` when it matters which. The message starts with the
 * store's name (`etcd: ...`); `cause` holds the client's error when there was one. A store that
 * answered with a refusal (credentials, TLS, a request it rejects) is another error.
 */
export class StoreUnavailableError extends IdsError {
  readonly code = 'ERR_IDS_STORE_UNAVAILABLE';
  override readonly name = 'StoreUnavailableError';
  constructor(
    /**
     * The store that did not answer: `etcd`, `redis`, `zookeeper`, `postgres`, `pglite`,
     * `mysql`, `ec2-metadata`, or another store's own name.
     */
    readonly store: string,
    /**
     * What it was asked for: a machine ID (a claim or a check), a lock, a segment of IDs, or
     * `token`: the server's idempotency tokens and Idempotency-Key records.
     */
    readonly feature: 'machine-id' | 'lock' | 'segment' | 'token',
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${store}: ${message}`, options);
  }
}
