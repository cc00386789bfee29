import { IdsError } from '@ids/engine';
import type { LeaseLossKind } from './store.js';

// One class per failure, whatever the store: a user catches "every ID is held" once, and reads
// `store` when it matters which store said it. Each store package re-exports this module whole
// (the '@ids/machine-lease/errors' entry): it exports the classes and nothing else.

// "The store did not answer" is the engine's one class for every store and feature (machine IDs,
// locks, segments), passed on here so that a store's users find it beside the rest of the family.
export { StoreUnavailableError } from '@ids/engine';

/**
 * What every lease failure has: the store it came from, named in `store` and at the start of
 * the message (`etcd: ...`, `redis: ...`).
 */
export abstract class LeaseError extends IdsError {
  constructor(
    /** The store that failed, as its LeaseStore names itself: `etcd`, `redis`, or another store's name. */
    readonly store: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${store}: ${message}`, options);
  }
}

/**
 * The store answered with an error that waiting will not fix: refused credentials or
 * permissions, a TLS certificate that does not verify, a request it rejects. A renewing claim
 * stops retrying on it (it retries on StoreUnavailableError, a store that did not answer).
 * `cause` holds the client's error.
 */
export class LeaseStoreRefusedError extends LeaseError {
  readonly code = 'ERR_IDS_LEASE_STORE_REFUSED';
  override readonly name = 'LeaseStoreRefusedError';
}

/**
 * The lease behind a claim can no longer be trusted: the generator stops issuing IDs (it reports
 * MachineIdLostError with this as `cause`) until the claim is renewed. It is also the reason
 * of the claim's AbortSignal.
 */
export class LeaseLostError extends LeaseError {
  readonly code = 'ERR_IDS_LEASE_LOST';
  override readonly name = 'LeaseLostError';
  constructor(
    store: string,
    /** Why the lease stopped being trusted. */
    readonly kind: LeaseLossKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(store, message, options);
  }
}

/** Every machine ID of the field is held by a live lease (or the one ID asked for is). */
export class LeaseSpaceFullError extends LeaseError {
  readonly code = 'ERR_IDS_LEASE_SPACE_FULL';
  override readonly name = 'LeaseSpaceFullError';
}

/**
 * The machine field's width does not match: the `bits` option differs from the generator's, an
 * ID asked for does not fit the field, or a claim in the store holds an ID that does not (another
 * fleet with a wider field shares the prefix).
 */
export class LeaseBitsMismatchError extends LeaseError {
  readonly code = 'ERR_IDS_LEASE_BITS_MISMATCH';
  override readonly name = 'LeaseBitsMismatchError';
}

/**
 * A key under the prefix that no holder wrote: a claim, recorded time or index whose name or
 * value does not parse. Nothing is written over it; remove it or use another prefix.
 */
export class LeaseCorruptClaimError extends LeaseError {
  readonly code = 'ERR_IDS_LEASE_CORRUPT_CLAIM';
  override readonly name = 'LeaseCorruptClaimError';
  /** The key at fault, e.g. `/ids/machine-id/7` (etcd) or `{ids:machine-id}:7` (Redis). */
  readonly key: string;
  constructor(store: string, key: string, message: string) {
    super(store, message);
    this.key = key;
  }
}

/**
 * The time recorded for the claimed ID lies further ahead of this host's clock than
 * `maxNotBeforeWaitMs`: the claim was given up rather than waited for.
 */
export class LeaseTimeAheadError extends LeaseError {
  readonly code = 'ERR_IDS_LEASE_TIME_AHEAD';
  override readonly name = 'LeaseTimeAheadError';
}
