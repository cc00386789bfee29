import { errorText } from './check.js';
import {
  AsyncSettingError,
  IdsError,
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
  /**
   * Set by a chain of providers (machine-file's `auto`): the provider says here, in a sentence,
   * how it chose its ID, for the chain's trail (`--explain`). A chain run as a provider notes the
   * sentence of the step it used, then its trail on the following lines, and passes the trail
   * as data too (`trail`: each step tried, what it did and why), for a log that keeps it as
   * fields. Other callers leave it out.
   */
  readonly note?:
    | ((
        detail: string,
        trail?: readonly { readonly step: string; readonly outcome: string; readonly detail: string }[],
      ) => void)
    | undefined;
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
  readonly signal?: AbortSignal | undefined;
  /**
   * The last instant (Unix ms) recorded for this ID by an earlier holder; the generator issues no
   * ID for a tick at or before it, so a restart with the clock behind cannot reissue.
   */
  readonly notBefore?: number | undefined;
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
  readonly recordIntervalMs?: number | undefined;
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

/**
 * A provider with a name: one step of a chain of providers (machine-file's `auto` chain), which
 * tries each in order until one gives an ID. A step that has nothing to try, or tried and found
 * none, throws NoMachineIdHereError and the chain goes on; any other error stops the chain.
 */
export interface NamedMachineIdProvider {
  /** The name in the chain's trail and in IDS_AUTO_OPT_IN: `private-ip`. */
  readonly name: string;
  /** The name for a person, in `--explain`: `private IPv4`. */
  readonly title: string;
  /** True when the chain runs it only if named in its opt-in list (IDS_AUTO_OPT_IN); else it is skipped, saying so. */
  readonly optIn?: boolean;
  /** The provider itself. */
  readonly provider: MachineIdProvider;
}

/**
 * Thrown by a provider that has no machine ID here: `skipped` when it had nothing to try (not in
 * Kubernetes), `failed` when it tried and found none (no private IPv4 address). A chain of
 * providers records the outcome and goes on to its next provider; used alone, the provider's
 * caller sees it as the `cause` of MachineIdProviderError.
 */
export class NoMachineIdHereError extends IdsError {
  readonly code = 'ERR_IDS_NO_MACHINE_ID_HERE';
  override readonly name = 'NoMachineIdHereError';
  constructor(
    message: string,
    /** `skipped`: nothing to try; `failed`: tried and found none. */
    readonly outcome: 'skipped' | 'failed' = 'skipped',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Go's `CheckMachineID func(int) bool`: false refuses the ID (for example, another process holds it). */
export type MachineIdCheck = (machineId: number) => boolean | Promise<boolean>;

/** A machine ID as a generator takes it: a number, a claim, or a provider of either. */
export type MachineIdSource = number | MachineIdClaim | MachineIdProvider;

/** Whether a machine ID is a claim rather than a number: an object with `machineId` and `release`. */
export function isClaim(value: unknown): value is MachineIdClaim {
  return typeof value === 'object' && value !== null && 'machineId' in value && 'release' in value;
}

/** The ID a resolved machine ID stands for: the number itself, or the claim's `machineId`. */
export function idOf(value: number | MachineIdClaim): number {
  return isClaim(value) ? value.machineId : value;
}

/**
 * Releases a claim (a number needs nothing) and never rejects: its errors go to `onError`,
 * ignored by default. Used wherever a claim must not stay held but the release's own failure
 * is not the error worth reporting (a refused ID, a failed construction, a renewed claim).
 */
export function releaseQuietly(
  value: number | MachineIdClaim | undefined,
  onError: (error: unknown) => void = () => undefined,
): Promise<void> {
  if (value === undefined || !isClaim(value)) return Promise.resolve();
  // Called at once, so a synchronous release has happened when a synchronous caller goes on.
  try {
    return Promise.resolve(value.release()).then(
      () => undefined,
      (error: unknown) => onError(error),
    );
  } catch (error) {
    onError(error);
    return Promise.resolve();
  }
}

/** Applies `next` now if `value` is ready, later if it is a Promise: synchronous steps stay synchronous. */
export function afterValue<T, U>(value: T | Promise<T>, next: (v: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

function providerError(error: unknown): MachineIdProviderError {
  const reason = errorText(error);
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

const asyncHint = 'use the async create() for providers and checks that return a Promise';

/**
 * How the steps treat a Promise: 'sync' refuses it (AsyncSettingError); 'maybe' awaits it and
 * stays synchronous otherwise; 'async' awaits it and also lets a refused claim's release finish
 * before the refusal rejects.
 */
export type ResolveMode = 'sync' | 'maybe' | 'async';

/**
 * The steps after the provider, in Go's order: the range (`inRange` throws for an ID that does
 * not fit), then `check`. A refused claim is released before the refusal is thrown (in 'sync'
 * and 'maybe' modes the release only starts). Synchronous while every step is.
 */
export function acceptMachineId(
  value: number | MachineIdClaim,
  inRange: (id: unknown) => void,
  check: MachineIdCheck | undefined,
  mode: ResolveMode,
): number | MachineIdClaim | Promise<number | MachineIdClaim> {
  const refuse = (error: unknown): never | Promise<never> => {
    const released = releaseQuietly(value);
    if (mode !== 'async') throw error;
    return released.then(() => {
      throw error;
    });
  };
  const id = idOf(value);
  try {
    inRange(id);
  } catch (error) {
    return refuse(error);
  }
  if (!check) return value;
  let ok: unknown;
  try {
    ok = check(id);
  } catch (error) {
    return refuse(rejected(id, error));
  }
  const verdict = (answer: unknown) => (answer === true ? value : refuse(rejected(id)));
  if (ok instanceof Promise) {
    if (mode === 'sync') {
      ok.catch(() => undefined);
      return refuse(new AsyncSettingError(`checkMachineId returned a Promise; ${asyncHint}`));
    }
    return ok.then(verdict, (error: unknown) => refuse(rejected(id, error)));
  }
  return verdict(ok);
}

/** The one description of the steps; `resolveMachineId` and `resolveMachineIdSync` pick the mode. */
function resolveSteps(
  layout: Layout,
  source: MachineIdSource,
  check: MachineIdCheck | undefined,
  mode: ResolveMode,
): number | MachineIdClaim | Promise<number | MachineIdClaim> {
  checkSource(source);
  let provided: unknown;
  try {
    provided = typeof source === 'function' ? source({ bits: layout.machineBits }) : source;
  } catch (error) {
    throw providerError(error);
  }
  const inRange = (id: unknown) => checkMachineId(layout, id);
  if (provided instanceof Promise) {
    if (mode === 'sync') {
      provided.then(
        (v: number | MachineIdClaim) => releaseQuietly(v),
        () => undefined,
      );
      throw new AsyncSettingError(`machineId: the provider returned a Promise; ${asyncHint}`);
    }
    return provided.then(
      (value: number | MachineIdClaim) => acceptMachineId(value, inRange, check, mode),
      (error: unknown) => {
        throw providerError(error);
      },
    );
  }
  return acceptMachineId(provided as number | MachineIdClaim, inRange, check, mode);
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
  return resolveSteps(layout, source, check, 'async');
}

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
  return resolveSteps(layout, source, check, 'sync') as number | MachineIdClaim;
}
