import {
  AsyncSettingError,
  InvalidArgumentError,
  MachineIdProviderError,
  MachineIdRejectedError,
  received,
} from './errors.js';
import { checkMachineId } from './id.js';
import type { Layout } from './layout.js';

/** What a provider is told: how many bits the machine field has, so it can fail when its ID would not fit. */
export interface MachineIdContext {
  /** Width of the layout's machine field: valid IDs are integers from 0 to 2^bits - 1. */
  readonly bits: number;
}

/**
 * A machine ID held for a while rather than computed once: a host-local claim file, an etcd
 * lease. The generator watches it, and a provider may return one instead of a number.
 */
export interface MachineIdClaim {
  /** The ID held: an integer from 0 to 2^machineBits - 1 (else InvalidMachineIdError when resolved). */
  readonly machineId: number;
  /**
   * Aborts when the claim can no longer be trusted; the generator then refuses to issue IDs
   * (fencing, MachineIdLostError) until `renew` gives it a claim again. Without it, the claim
   * is never lost.
   */
  readonly signal?: AbortSignal;
  /**
   * The last instant (Unix ms) recorded for this ID by an earlier holder; the generator issues no
   * ID for a tick at or before it, so a restart with the clock behind cannot reissue.
   */
  readonly notBefore?: number;
  /**
   * How far (ms) `notBefore` may lie ahead of the previous holder's clock by design: a claim
   * that records a horizon ahead of the clock (a host claim's `recordAheadMs`) says so here, and
   * the generator then waits that much longer for `notBefore` to pass before it fails with
   * ClockMovedBackwardsError (its bound is for a clock that moved back, not for the horizon).
   * Default 0.
   */
  readonly notBeforeLeadMs?: number;
  /**
   * How often, in ms, `record` is called while IDs are issued. Default 1000
   * (DEFAULT_RECORD_INTERVAL_MS); 0 or more, else InvalidArgumentError when the generator
   * adopts the claim.
   */
  readonly recordIntervalMs?: number;
  /**
   * Stores the last millisecond of the latest tick used, for the next holder's `notBefore`.
   * Called every `recordIntervalMs` while IDs are issued, and on close; its errors go to the
   * generator's `onError`.
   */
  record?(timeMs: number): void | Promise<void>;
  /**
   * Called synchronously before each ID is issued. A claim that lapses by time alone (a lease
   * whose keepalives stopped while this thread was too busy to run timers, e.g. in a loop of
   * nextIdSync) aborts `signal` from here, so such a thread cannot issue IDs past the lapse.
   */
  verify?(): void;
  /**
   * How many ms from now the claim is certainly still held (0 once lost), for a claim that
   * lapses by time (a lease). A generator on a shared state publishes `now + trustedForMs()` to
   * the other threads, which refuse to issue past it: they stop at the claim's deadline even
   * when the holding thread is too busy to notice it lapsed. Without it, threads are fenced
   * only when the holder notices.
   */
  trustedForMs?(): number;
  /** After the signal aborted: resolves with a fresh claim (possibly another ID) once one is held again. */
  renew?(): Promise<MachineIdClaim>;
  /** Frees the ID. The generator calls it from `close()`, and for a claim whose ID is refused. */
  release(): void | Promise<void>;
}

/** Go's `MachineID func() (int, error)`, told the field's width. May return a claim instead of a number. */
export type MachineIdProvider = (
  context: MachineIdContext,
) => number | MachineIdClaim | Promise<number | MachineIdClaim>;

/** Go's `CheckMachineID func(int) bool`: false refuses the ID (for example, another process holds it). */
export type MachineIdCheck = (machineId: number) => boolean | Promise<boolean>;

/** A machine ID as a generator takes it: a number, a claim, or a provider of either. */
export type MachineIdSource = number | MachineIdClaim | MachineIdProvider;

/** Whether a machine ID is a claim rather than a number: an object with `machineId` and `release`. */
export function isClaim(value: unknown): value is MachineIdClaim {
  return typeof value === 'object' && value !== null && 'machineId' in value && 'release' in value;
}

function idOf(value: number | MachineIdClaim): unknown {
  return isClaim(value) ? value.machineId : value;
}

/** A claim for an ID that is refused must not stay held; the refusal stays the error. */
function releaseRefused(value: number | MachineIdClaim): Promise<unknown> {
  return isClaim(value)
    ? Promise.resolve()
        .then(() => value.release())
        .catch(() => undefined)
    : Promise.resolve();
}

function providerError(error: unknown): MachineIdProviderError {
  const reason = error instanceof Error ? error.message : String(error);
  return new MachineIdProviderError(`the machine ID provider failed: ${reason}`, { cause: error });
}

function rejected(id: number, cause?: unknown): MachineIdRejectedError {
  return cause === undefined
    ? new MachineIdRejectedError(`invalid machine id: checkMachineId refused ${id}`)
    : new MachineIdRejectedError(`invalid machine id: checkMachineId threw for ${id}`, { cause });
}

function checkSource(source: unknown): void {
  if (
    source !== undefined &&
    typeof source !== 'number' &&
    typeof source !== 'function' &&
    !isClaim(source)
  ) {
    throw new InvalidArgumentError(
      `machineId: expected a number, a claim or a provider function, received ${received(source)}`,
    );
  }
}

/**
 * Go's order in `New`: run the provider (its error is passed through as `cause`), check the
 * range, then ask `check`. A claim whose ID is refused is released.
 *
 * Rejects with InvalidArgumentError for a source that is not a number, claim or function;
 * MachineIdProviderError when the provider throws or rejects; InvalidMachineIdError for an ID
 * outside [0, 2^machineBits); MachineIdRejectedError when `check` answers anything but true or
 * throws (its error is the `cause`).
 */
export async function resolveMachineId(
  layout: Layout,
  source: MachineIdSource,
  check?: MachineIdCheck,
): Promise<number | MachineIdClaim> {
  checkSource(source);
  let value: number | MachineIdClaim;
  try {
    value = typeof source === 'function' ? await source({ bits: layout.machineBits }) : source;
  } catch (error) {
    throw providerError(error);
  }
  try {
    checkMachineId(layout, idOf(value));
    if (check) {
      const id = typeof value === 'number' ? value : value.machineId;
      let ok: unknown;
      try {
        ok = await check(id);
      } catch (error) {
        throw rejected(id, error);
      }
      if (ok !== true) throw rejected(id);
    }
  } catch (error) {
    await releaseRefused(value);
    throw error;
  }
  return value;
}

const asyncHint = 'use the async create() for providers and checks that return a Promise';

/**
 * The same steps for the synchronous constructors: anything returning a Promise is refused.
 * @throws what `resolveMachineId` rejects with, and AsyncSettingError when the provider or the
 * check returns a Promise.
 */
export function resolveMachineIdSync(
  layout: Layout,
  source: MachineIdSource,
  check?: MachineIdCheck,
): number | MachineIdClaim {
  checkSource(source);
  let value: unknown;
  try {
    value = typeof source === 'function' ? source({ bits: layout.machineBits }) : source;
  } catch (error) {
    throw providerError(error);
  }
  if (value instanceof Promise) {
    value.then(
      (v) => (isClaim(v) ? v.release() : undefined),
      () => undefined,
    );
    throw new AsyncSettingError(`machineId: the provider returned a Promise; ${asyncHint}`);
  }
  const resolved = value as number | MachineIdClaim;
  try {
    checkMachineId(layout, idOf(resolved));
    if (check) {
      const id = typeof resolved === 'number' ? resolved : resolved.machineId;
      let ok: unknown;
      try {
        ok = check(id);
      } catch (error) {
        throw rejected(id, error);
      }
      if (ok instanceof Promise) {
        ok.catch(() => undefined);
        throw new AsyncSettingError(`checkMachineId returned a Promise; ${asyncHint}`);
      }
      if (ok !== true) throw rejected(id);
    }
  } catch (error) {
    void releaseRefused(resolved);
    throw error;
  }
  return resolved;
}
