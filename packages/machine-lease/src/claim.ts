import type { MachineIdClaim } from '@ids/engine';
import type { LeaseTiming } from './lease.js';

// What a holder is given and what it hands out, apart from how it holds: the provider builds
// the options and the stores' packages pass the claim on, neither needing the holder's machinery.

/** What a holder needs beyond the lease timing: how to find and record an ID. */
export interface CheckedHolderOptions extends LeaseTiming {
  /** Random IDs tried before listing the taken ones. */
  readonly probes: number;
  /** How often, in ms, the generator records the time reached. */
  readonly recordIntervalMs: number;
  /** The width of the generator's machine field. */
  readonly bits: number;
  /** The one ID to hold (chosen by the user), instead of any free one. */
  readonly only?: number;
  /** The longest wait, in ms, for a recorded time ahead of this host's clock. */
  readonly maxNotBeforeWaitMs: number;
  /** Receives the RecordedTimeWait notice. */
  readonly onError: (error: unknown) => void;
}

/** A machine ID held through a lease in some store; the generator watches it (see MachineIdClaim). */
export interface LeasedClaim extends MachineIdClaim {
  /** Aborts, with a LeaseLostError as reason, when the lease can no longer be trusted, or on release. */
  readonly signal: AbortSignal;
  /** The claim's key in the store. */
  readonly key: string;
  /** The lease holding the key (the store's ID for it). */
  readonly leaseId: string;
  /** Fences at once if the lease's trust deadline has passed (timers may not have run yet). */
  verify(): void;
  /** ms until the lease's trust deadline (0 once lost): what worker threads on a shared state stop at. */
  trustedForMs(): number;
  /** Writes the time reached (kept only if later than any before), while the key is still ours. */
  record(timeMs: number): Promise<void>;
  /**
   * Once the signal aborted: resolves with a claim again, retrying while the store is
   * unavailable. It keeps the same ID when the lease survived, else claims one (the same ID if
   * still free). Rejects on what retrying cannot fix. After release it never settles.
   */
  renew(): Promise<LeasedClaim>;
  /**
   * Waits for pending records, cancels the watch, stops keepalives, revokes the lease and
   * closes the store. Idempotent; rejects with StoreUnavailableError when the lease
   * could not be revoked (it then expires within the TTL).
   */
  release(): Promise<void>;
}
