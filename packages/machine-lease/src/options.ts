import { DEFAULT_RECORD_INTERVAL_MS, InvalidArgumentError, InvalidMachineIdError } from '@ids/engine';
import { checkInteger, checkOnError, invalidArgument, received } from '@ids/engine/internal';
import { LeaseCorruptClaimError } from './errors.js';
import type { LeaseTiming } from './lease.js';

/** Lease TTL when none is given, in seconds. */
export const DEFAULT_TTL_SECONDS = 10;
/** How long any single exchange with the store may take before it counts as "unavailable". */
export const DEFAULT_TIMEOUT_MS = 3000;
/** Random IDs tried before listing the taken ones. */
export const DEFAULT_PROBES = 3;
/**
 * What the default `maxNotBeforeWaitMs` allows beyond one TTL, in ms: room for clocks that
 * disagree (a Redis claim's own unknown-past record is one TTL ahead of its writer's clock).
 */
export const NOT_BEFORE_WAIT_SLACK_MS = 60_000;
/** Node's longest timer (2^31 - 1 ms, about 24.8 days): a longer setTimeout fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The options every leased provider shares, as the user gives them (each store documents them). */
export interface LeaseOptions {
  /** Lease TTL in whole seconds, 1 to 86,400. */
  readonly ttlSeconds?: number;
  /** How long before the store could expire the lease the holder stops trusting it, in ms. */
  readonly fenceMarginMs?: number;
  /** Time between keepalives, in ms. */
  readonly keepaliveIntervalMs?: number;
  /** The longest any exchange with the store may take, in ms. */
  readonly timeoutMs?: number;
  /** The width of the machine field this fleet uses, 0 to 30. */
  readonly bits?: number;
}

/** The options of a provider (not of a check): which ID to hold, and how to pick and record it. */
export interface HolderOptions {
  /**
   * Hold exactly this machine ID instead of any free one: the safe form of Go's
   * `CheckMachineID` for an ID you chose (a lease, fencing, renewal). An integer from 0 to
   * 2^30 - 1, else InvalidArgumentError; one that does not fit the generator's field is
   * LeaseBitsMismatchError; taken by another process, the provider rejects with
   * LeaseSpaceFullError. Default: any free ID.
   */
  readonly machineId?: number;
  /** Random IDs tried before listing the taken ones, 0 to 64. */
  readonly probes?: number;
  /** How often, in ms, the generator records the time it reached. */
  readonly recordIntervalMs?: number;
  /**
   * The longest a claim waits, in ms, for the time an earlier holder recorded for its ID when
   * that time lies ahead of this host's clock; further ahead, the provider rejects with
   * LeaseTimeAheadError. An integer from 0 to 2,147,483,647 (Node's timer
   * maximum). Default: the TTL plus 60,000 ms.
   */
  readonly maxNotBeforeWaitMs?: number;
  /**
   * Every claim this provider makes while another of its claims is held shares one lease, one
   * store connection and one keepalive (on ZooKeeper one session), instead of one each: the
   * cost of a process holding several machine IDs grows with processes, not IDs. The claims
   * are fenced together when the lease is lost, and each recovers its own ID; releasing one
   * deletes its key, releasing the last revokes the lease. Default false.
   */
  readonly shareLease?: boolean;
  /**
   * Receives what a claim reports without failing: the notice (a RecordedTimeWait), once per
   * wait, that it waits for a recorded time. Default: a process warning.
   */
  readonly onError?: (error: unknown) => void;
}

/**
 * The options object a store's provider or check was given, `{}` for none; anything but an
 * object is InvalidArgumentError naming `options`. Every store checks this first, so one place.
 */
export function checkOptionsObject<T extends object>(options: T | undefined): T {
  if (options === undefined) return {} as T;
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`expected an object, received ${received(options)}`, {
      option: 'options',
    });
  }
  return options;
}

/** Whole numbers from `min` to `max` (the engine's one integer check, bounds written 86,400). */
export function integer(value: unknown, option: string, min: number, max: number): number {
  return checkInteger(value, option, min, max, invalidArgument, true);
}

/** A number of ms, finite, 0 or more (or above 0). */
export function ms(value: unknown, option: string, allowZero: boolean): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new InvalidArgumentError(
      `expected a number of ms ${allowZero ? '0 or more' : 'above 0'}, received ${received(value)}`,
      { option },
    );
  }
  return value;
}

/** The validated lease timing, and `bits` when given. */
export interface CheckedLeaseOptions extends LeaseTiming {
  /** The fleet's machine-field width, when the user fixed it. */
  readonly bits: number | undefined;
}

/**
 * Validates the timing options in the order they are documented: the TTL, a margin under it,
 * a keepalive interval that leaves room for two failures before the deadline, the timeout, bits.
 */
export function checkLeaseOptions(o: LeaseOptions): CheckedLeaseOptions {
  const ttlSeconds = integer(o.ttlSeconds ?? DEFAULT_TTL_SECONDS, 'ttlSeconds', 1, 86_400);
  const ttlMs = ttlSeconds * 1000;
  const marginMs = ms(o.fenceMarginMs ?? ttlMs / 5, 'fenceMarginMs', true);
  if (marginMs >= ttlMs) {
    throw new InvalidArgumentError(
      `a TTL of ${ttlSeconds} s (${ttlMs} ms) must be above fenceMarginMs (${marginMs} ms): the holder stops trusting its lease TTL minus the margin after each keepalive, received a TTL under the margin`,
      { option: 'ttlSeconds' },
    );
  }
  const intervalMs = ms(o.keepaliveIntervalMs ?? (ttlMs - marginMs) / 3, 'keepaliveIntervalMs', false);
  if (intervalMs >= ttlMs - marginMs) {
    throw new InvalidArgumentError(
      `expected less than TTL minus fenceMarginMs (${ttlMs - marginMs} ms), or every claim would be fenced between two keepalives, received ${intervalMs}`,
      { option: 'keepaliveIntervalMs' },
    );
  }
  const timeoutMs = ms(o.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs', false);
  const bits = o.bits === undefined ? undefined : integer(o.bits, 'bits', 0, 30);
  return { ttlSeconds, marginMs, intervalMs, timeoutMs, bits };
}

/** The validated HolderOptions. */
export interface CheckedHolderChoices {
  /** Random IDs tried before listing the taken ones. */
  readonly probes: number;
  /** How often, in ms, the generator records the time it reached. */
  readonly recordIntervalMs: number;
  /** The longest wait, in ms, for a recorded time ahead of the clock (the default filled in). */
  readonly maxNotBeforeWaitMs: number;
  /** Receives the RecordedTimeWait notice (a process warning by default). */
  readonly onError: (error: unknown) => void;
}

/** Validates `probes`, `recordIntervalMs`, `maxNotBeforeWaitMs` (its default needs the TTL) and `onError`. */
export function holderOptions(o: HolderOptions, ttlSeconds: number): CheckedHolderChoices {
  const probes = integer(o.probes ?? DEFAULT_PROBES, 'probes', 0, 64);
  const recordIntervalMs = ms(o.recordIntervalMs ?? DEFAULT_RECORD_INTERVAL_MS, 'recordIntervalMs', false);
  const maxNotBeforeWaitMs = integer(
    o.maxNotBeforeWaitMs ?? Math.min(ttlSeconds * 1000 + NOT_BEFORE_WAIT_SLACK_MS, MAX_TIMER_MS),
    'maxNotBeforeWaitMs',
    0,
    MAX_TIMER_MS,
  );
  return { probes, recordIntervalMs, maxNotBeforeWaitMs, onError: checkOnError(o.onError) };
}

/**
 * A recorded time as stores keep it (decimal Unix ms, at most 16 digits), or undefined when the
 * text is anything else: the store then reports the key as LeaseCorruptClaimError.
 */
function recordedTime(raw: string): number | undefined {
  const ms = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * A recorded time read back from `key` of `store`: its milliseconds, or LeaseCorruptClaimError
 * saying what the key holds and what was expected.
 */
export function readRecordedTime(store: string, key: string, raw: string): number {
  const ms = recordedTime(raw);
  if (ms === undefined) {
    throw new LeaseCorruptClaimError(
      store,
      key,
      `the recorded time ${key} holds ${received(raw)}: expected decimal Unix milliseconds; remove the key or use another prefix`,
    );
  }
  return ms;
}

/** The ID a store's Go-style check is asked about. @throws InvalidMachineIdError unless an integer 0 or more. */
export function checkAskedId(machineId: unknown): number {
  if (typeof machineId !== 'number' || !Number.isInteger(machineId) || machineId < 0) {
    throw new InvalidMachineIdError(
      `checkMachineId: expected a machine ID, an integer 0 or more, received ${received(machineId)}`,
    );
  }
  return machineId;
}
