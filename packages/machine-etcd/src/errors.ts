import { IdsError } from '@ids/engine';
import type { LeaseErrors, LeaseLossKind } from '@ids/machine-lease';

export type { LeaseLossKind };

/** An option of etcdMachineId / etcdCheckMachineId that cannot work; `option` names it. */
export class EtcdOptionError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_OPTION';
  override readonly name = 'EtcdOptionError';
  constructor(
    /** The option at fault: 'endpoints', 'prefix', 'ttlSeconds', 'fenceMarginMs', ... */
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}

/**
 * etcd did not answer: no server listening, none reachable within `timeoutMs`, or etcd3's
 * circuit breaker is open after repeated failures. `cause` holds the client's error
 * (GRPCUnavailableError, BrokenCircuitError, a deadline) when there was one.
 */
export class EtcdUnavailableError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_UNAVAILABLE';
  override readonly name = 'EtcdUnavailableError';
}

/**
 * The TLS connection to etcd failed on its certificate (self-signed or unknown CA, a name that
 * does not match, expired): waiting will not fix it, so it is not EtcdUnavailableError and a
 * renewing claim stops retrying on it. `cause` holds the client's error.
 */
export class EtcdTlsError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_TLS';
  override readonly name = 'EtcdTlsError';
}

/** etcd answered with an error that waiting will not fix (permission denied, bad credentials, ...); `cause` holds it. */
export class EtcdRequestError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_REQUEST';
  override readonly name = 'EtcdRequestError';
}

/** A key under the prefix that this package did not write: its name or value does not parse. */
export class CorruptClaimError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_CORRUPT_KEY';
  override readonly name = 'CorruptClaimError';
  constructor(
    /** The etcd key at fault, e.g. `/ids/machine-id/7`. */
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The machine field's width does not match: the `bits` option differs from the generator's, or
 * a claim under the prefix holds an ID that does not fit the generator's field (another fleet
 * with a wider field shares the prefix).
 */
export class MachineBitsMismatchError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_BITS_MISMATCH';
  override readonly name = 'MachineBitsMismatchError';
}

/** Every machine ID of the field is held by a live lease. */
export class MachineIdSpaceFullError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_SPACE_FULL';
  override readonly name = 'MachineIdSpaceFullError';
}

/**
 * The time recorded for the claimed ID lies further ahead of this host's clock than
 * `maxNotBeforeWaitMs`: the claim was given up rather than waited for.
 */
export class RecordedTimeAheadError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_TIME_AHEAD';
  override readonly name = 'RecordedTimeAheadError';
}

/**
 * The lease behind a claim can no longer be trusted: the generator stops issuing IDs (it reports
 * MachineIdLostError with this as `cause`) until the claim is renewed.
 */
export class EtcdLeaseLostError extends IdsError {
  readonly code = 'ERR_IDS_ETCD_LEASE_LOST';
  override readonly name = 'EtcdLeaseLostError';
  constructor(
    /** Why the lease stopped being trusted. */
    readonly kind: LeaseLossKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** How the lease holder names etcd's failures: with this package's classes and codes. */
export const etcdErrors: LeaseErrors = {
  lost: (kind, message, options) => new EtcdLeaseLostError(kind, message, options),
  isLost: (error): error is EtcdLeaseLostError => error instanceof EtcdLeaseLostError,
  unavailable: (message, options) => new EtcdUnavailableError(message, options),
  spaceFull: (message) => new MachineIdSpaceFullError(message),
  timeAhead: (message) => new RecordedTimeAheadError(message),
  bitsMismatch: (message) => new MachineBitsMismatchError(message),
  option: (option, message) => new EtcdOptionError(option, message),
  transient: (error) =>
    error instanceof EtcdUnavailableError ||
    error instanceof EtcdLeaseLostError ||
    error instanceof MachineIdSpaceFullError,
};
