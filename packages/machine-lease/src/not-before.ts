import type { CheckedHolderOptions } from './claim.js';
import { LeaseTimeAheadError } from './errors.js';
import type { Attempt } from './store.js';

// The time arithmetic between holding a claim and handing it out (a quarantine the store asks
// for, or a recorded time ahead of this clock), kept apart from the holder's state so that it
// reads, and is tested, as a function of the clock it is given.

/**
 * The notice a claim gives, once per wait, through `onError` (by default a process warning)
 * when the time an earlier holder recorded for its ID lies ahead of this host's clock: the
 * claim is held, and handed to the generator once that time has passed here. Not a failure.
 */
export class RecordedTimeWait extends Error {
  override readonly name = 'RecordedTimeWait';
  constructor(
    /** The machine ID waited for. */
    readonly machineId: number,
    /** The recorded time (Unix ms). */
    readonly notBefore: number,
    /** How long the claim waits, in ms. */
    readonly waitMs: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * How long to hold the claim of `id` before handing it out. The store may have forgotten a live
 * holder of this ID (Redis restarted without persistence): that holder fences within one TTL
 * of its last confirmed keepalive, which was before the store forgot, and the store says how
 * long that can still be. Otherwise, a time an earlier holder recorded ahead of this clock
 * (its clock ran ahead, or it recorded a horizon) is waited out here, said once and bounded
 * by maxNotBeforeWaitMs, rather than left to the generator's clock-backwards bound.
 * @throws LeaseTimeAheadError past the bound.
 */
export function waitBeforeIssuing(
  store: string,
  id: number,
  attempt: Extract<Attempt, { held: true }>,
  wallNow: () => number,
  settings: Pick<CheckedHolderOptions, 'maxNotBeforeWaitMs' | 'onError'>,
): number {
  if (attempt.quarantineMs !== undefined && attempt.quarantineMs > 0) return attempt.quarantineMs;
  if (attempt.notBefore === undefined) return 0;
  const now = wallNow();
  // notBefore is the last instant already used: the wait ends just past it.
  const waitMs = Math.floor(attempt.notBefore - now) + 1;
  if (waitMs <= 0) return 0;
  const max = settings.maxNotBeforeWaitMs;
  const recorded = `the time recorded for machine ID ${id} in ${store} (${new Date(attempt.notBefore).toISOString()})`;
  if (waitMs > max) {
    throw new LeaseTimeAheadError(
      store,
      `${recorded} is ${waitMs} ms ahead of this host's clock (${new Date(now).toISOString()}): expected at most maxNotBeforeWaitMs = ${max} ms. An earlier holder's clock ran ahead, or the record was written by hand: check the clocks, or raise maxNotBeforeWaitMs`,
    );
  }
  settings.onError(
    new RecordedTimeWait(
      id,
      attempt.notBefore,
      waitMs,
      `waiting ${waitMs} ms before issuing: ${recorded} is ahead of this host's clock (at most maxNotBeforeWaitMs = ${max} ms)`,
    ),
  );
  return waitMs;
}
