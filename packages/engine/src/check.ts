// The checks every package applies to what it is given, written once: an integer option, an
// error's text, the default error sink, a start time, a state cell, a number of ms.
import type { Clock } from './clock.js';
import { InvalidArgumentError, InvalidStartTimeError, received, StartTimeAheadError } from './errors.js';
import type { StateCell } from './options.js';

/** Builds the error for a value that failed a check: `what` names the value, `expected` says what was wanted and what came. */
export type CheckFailure = (what: string, expected: string) => Error;

/** The default CheckFailure: InvalidArgumentError naming `what` as its option (message `<what>: <expected>`). */
export const invalidArgument: CheckFailure = (what, expected) =>
  new InvalidArgumentError(expected, { option: what });

/**
 * Returns `value` if it is an integer from `min` to `max`, else throws what `fail` builds (by
 * default InvalidArgumentError), with a message saying the range expected and the value received.
 * `grouped` writes the bounds with thousands separators (86,400).
 */
export function checkInteger(
  value: unknown,
  what: string,
  min: number,
  max: number,
  fail: CheckFailure = invalidArgument,
  grouped = false,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const show = (n: number) => (grouped ? n.toLocaleString('en-US') : String(n));
    throw fail(what, `expected an integer from ${show(min)} to ${show(max)}, received ${received(value)}`);
  }
  return value;
}

/** An error's message, or the thrown value as text when it is not an Error. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The one of `names` a mistyped `word` most likely meant, for a "did you mean" hint: the only name
 * it is a prefix of (`gen` for generate), else the nearest by edit distance when that is at most
 * a third of the word's length (at least 1); undefined when nothing is that close or two tie.
 */
export function closestName(word: string, names: readonly string[]): string | undefined {
  const prefixed = names.filter((name) => name.startsWith(word));
  if (word !== '' && prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  let tie = false;
  for (const name of names) {
    const distance = editDistance(word, name);
    if (distance < bestDistance) [best, bestDistance, tie] = [name, distance, false];
    else if (distance === bestDistance) tie = true;
  }
  return tie ? undefined : best;
}

/** Levenshtein distance: the fewest insertions, deletions and substitutions from a to b. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The default `onError` of generators and claims: a process warning, which never throws. */
export function warnError(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(errorText(error)));
}

/** An `onError` setting: a function, or undefined for `warnError`. @throws InvalidArgumentError otherwise. */
export function checkOnError(value: unknown): (error: unknown) => void {
  if (value === undefined) return warnError;
  if (typeof value !== 'function') {
    throw new InvalidArgumentError(
      `onError: expected a function that takes an error, received ${received(value)}`,
    );
  }
  return value as (error: unknown) => void;
}

/**
 * A start time (epoch) as whole Unix ms: a valid Date or an integer, not after the clock's now.
 * `noun` names it in messages ("start time" for Sonyflake, "epoch" for snowflake).
 * @throws InvalidStartTimeError for anything else; StartTimeAheadError when it is in the future.
 */
export function checkStartTime(start: unknown, clock: Clock, noun: string): number {
  const ms = start instanceof Date ? start.getTime() : start;
  if (typeof ms !== 'number' || !Number.isInteger(ms)) {
    throw new InvalidStartTimeError(
      `invalid ${noun}: expected a valid Date or whole Unix milliseconds, received ${received(start)}`,
    );
  }
  const now = clock.now();
  if (ms > now) {
    throw new StartTimeAheadError(
      `${noun} is ahead: ${new Date(ms).toISOString()} is after now (${new Date(now).toISOString()}); expected ${noun === 'epoch' ? 'an epoch' : `a ${noun}`} in the past`,
    );
  }
  return ms;
}

/** A settings object as a generator's constructor takes it: an object, or undefined for `{}`. */
export function checkSettingsObject<T extends object>(settings: T | undefined): T {
  if (settings === undefined) return {} as T;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new InvalidArgumentError(`settings: expected an object, received ${received(settings)}`);
  }
  return settings;
}

const CELL_METHODS = ['load', 'commit'] as const;
const CELL_HOOKS = ['attach', 'fence'] as const;

/**
 * A `state` setting: a state cell (an object with `load` and `commit`, and `attach`/`fence`
 * functions if present), or undefined for none (null). Checked at construction because a bad one
 * would only fail mid-run.
 * @throws InvalidArgumentError naming the member, what was expected and what was received.
 */
export function checkStateCell(value: unknown): StateCell | null {
  if (value === undefined) return null;
  const state = value as Record<string, unknown> | null;
  const expected = 'expected a state cell (an object with load() and commit(), e.g. sharedStateCell(shared))';
  if (typeof state !== 'object' || state === null) {
    throw new InvalidArgumentError(`state: ${expected}, received ${received(state)}`);
  }
  for (const key of CELL_METHODS) {
    if (typeof state[key] !== 'function') {
      throw new InvalidArgumentError(`state.${key}: ${expected}, received ${received(state[key])}`);
    }
  }
  for (const key of CELL_HOOKS) {
    if (state[key] !== undefined && typeof state[key] !== 'function') {
      throw new InvalidArgumentError(
        `state.${key}: expected a function or nothing, received ${received(state[key])}`,
      );
    }
  }
  return value as StateCell;
}

/** A number of ms option: 0 or more (Infinity allowed). @throws InvalidArgumentError otherwise. */
export function checkNonNegative(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new InvalidArgumentError(
      `${what}: expected a number of ms, 0 or more, received ${received(value)}`,
    );
  }
  return value;
}
