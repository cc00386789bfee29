import type { LeaseLostError } from './errors.js';
import { LeaseKeeper, type Scheduler } from './keeper.js';
import type { LeaseStore } from './store.js';

/** How a lease is held: the validated timing options every leased provider shares. */
export interface LeaseTiming {
  /** The TTL asked for, in whole seconds. */
  readonly ttlSeconds: number;
  /** How long before the store could expire the lease the holder stops trusting it, in ms. */
  readonly marginMs: number;
  /** Time between keepalives, in ms. */
  readonly intervalMs: number;
  /** Longest any single exchange with the store may take, in ms. */
  readonly timeoutMs: number;
}

/** A lease and the keeper that keeps it alive and decides when it is lost. */
export interface Lease {
  /** The store's ID of the lease. */
  readonly id: string;
  /** Its keeper, not yet started: the caller starts it once the lease is recorded as its own. */
  readonly keeper: LeaseKeeper;
}

/**
 * A keeper for lease `id`, trusted from `sentAt` (when the grant, or the keepalive that last
 * confirmed it, was sent) for `ttlMs`. It is not started: a keeper whose deadline passed while
 * the grant or the confirming keepalive was in flight fences inside `start()`, and `onLost` must
 * then find the lease already recorded by its caller, or the loss is dropped (issue 33: a
 * recovered claim was handed out on a keeper lost and stopped at its start).
 */
export function keepLease(
  store: LeaseStore,
  timing: LeaseTiming,
  scheduler: Scheduler,
  id: string,
  ttlMs: number,
  sentAt: number,
  onLost: (lease: Lease, reason: LeaseLostError) => void,
): Lease {
  const lease: Lease = {
    id,
    keeper: new LeaseKeeper(
      { ttlMs, marginMs: timing.marginMs, intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs },
      scheduler,
      (ms) => store.keepalive(id, ms),
      (reason) => onLost(lease, reason),
      sentAt,
      store.name,
    ),
  };
  return lease;
}

/**
 * Grants a lease and makes its keeper (not started: see keepLease). The TTL counted is the smaller of what was asked and
 * what was granted: a store that raises a TTL below its floor (etcd does) only errs on the
 * safe side, one that lowers it is believed.
 */
export async function grantLease(
  store: LeaseStore,
  timing: LeaseTiming,
  scheduler: Scheduler,
  onLost: (lease: Lease, reason: LeaseLostError) => void,
): Promise<Lease> {
  const sentAt = scheduler.now();
  const granted = await store.grant(timing.ttlSeconds);
  const ttlMs = Math.min(granted.ttlMs, timing.ttlSeconds * 1000);
  return keepLease(store, timing, scheduler, granted.id, ttlMs, sentAt, onLost);
}
