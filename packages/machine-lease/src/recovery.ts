import { LeaseLostError, LeaseSpaceFullError, StoreUnavailableError } from './errors.js';
import type { Lease } from './lease.js';

// How the holder judges a loss before it claims again: which lapsed leases are worth confirming
// (they may still live, and keeping one keeps the ID) and which failures renewal retries.

/** Whether `lease` stopped being trusted by time or an unanswered keepalive, not by a refusal: it may still live. */
export function lapsed(lease: Lease): boolean {
  const kind = lease.keeper.lost?.kind;
  return kind === 'keepalive-failed' || kind === 'deadline';
}

/** Whether renewing should retry after `error` (unreachable, lost, full) rather than give up. */
export function isTransient(error: unknown): boolean {
  return (
    error instanceof StoreUnavailableError ||
    error instanceof LeaseLostError ||
    error instanceof LeaseSpaceFullError
  );
}
