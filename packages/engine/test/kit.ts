// Test scaffolding the engine's tests share with the flavours' (sonyflake and snowflake import it
// by path): clocks that run under a tight loop, a heartbeat on the real event loop, and the
// tables of bad input both flavours refuse alike.
import { expect, it, vi } from 'vitest';
import type { Clock } from '../src/clock.js';
import type { MachineIdClaim } from '../src/machine.js';

/**
 * A clock that moves forward a little on every read, like a real one under a tight loop, and
 * whose sleeps move it forward instead of waiting. `stepMs` is the most one read advances it.
 */
export function runningClock(startMs: number, stepMs = 0.02): Clock & { reads: number } {
  let now = startMs;
  const clock = {
    reads: 0,
    now() {
      clock.reads++;
      now += Math.random() * stepMs;
      return now;
    },
    sleepSync(ms: number) {
      if (ms > 0) now += ms;
    },
    async sleep(ms: number) {
      if (ms > 0) now += ms;
    },
  };
  return clock;
}

/**
 * Awaits `next` back to back for `ms` of this process's CPU time beside a 1 ms interval on the
 * event loop, and reports how many calls it made, the interval's beats and the longest gap
 * between two, in CPU ms: a generator that starved the loop would show few beats and a long gap.
 * CPU time, not wall time, so that a busy machine, which takes the CPU from this process between
 * beats without the generator holding the loop, does not count as starving it.
 */
export async function saturate(
  next: () => Promise<unknown>,
  ms: number,
  /** Calls to make at the least, however little CPU they took (a generator that waits on ticks). */
  minCalls = 0,
): Promise<{ count: number; beats: number; longestGap: number }> {
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  let beats = 0;
  let last = cpuMs();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = cpuMs();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    beats++;
  }, 1);
  let count = 0;
  const until = cpuMs() + ms;
  while (cpuMs() < until || count < minCalls) {
    await next();
    count++;
  }
  clearInterval(timer);
  return { count, beats, longestGap };
}

/** Takes `count` IDs from `next` and says whether each was above the one before, and how many were distinct. */
export function takeInOrder(next: () => bigint, count: number): { increasing: boolean; distinct: number } {
  const ids = new Array<bigint>(count);
  let increasing = true;
  let previous = -1n;
  for (let i = 0; i < count; i++) {
    const id = next();
    if (id <= previous) increasing = false;
    ids[i] = previous = id;
  }
  return { increasing, distinct: new Set(ids).size };
}

/**
 * An error class. The flavours' tests pass the engine's classes from its build (what they
 * import), which are not the ones of this folder's `../src`, so the tables below take them in.
 */
type ErrorClass = abstract new (...args: never[]) => Error;

/** A row of a table of bad input: the case's name, the input, the class it throws, its message. */
export type BadInput<T> = [name: string, input: T, type: ErrorClass, message: RegExp];

/**
 * One test per row, named by `title` (`%s` is the row's name): `attempt(input)` throws the row's
 * class with a message its pattern matches, and is an instance of each class in `also` too.
 */
export function eachThrows<T>(
  title: string,
  rows: BadInput<T>[],
  attempt: (input: T) => unknown,
  ...also: ErrorClass[]
): void {
  it.each(rows)(title, (_name, input, type, message) => {
    expect(() => attempt(input)).toThrow(type);
    expect(() => attempt(input)).toThrow(message);
    for (const base of also) expect(() => attempt(input)).toThrow(base);
  });
}

/**
 * The settings both flavours' generators refuse with the engine's own check (`type` is its
 * InvalidArgumentError): settings that are not an object, an onError or a state cell of the
 * wrong kind. A row's settings are to be spread over a valid machine ID and clock; null stays null.
 */
export function badGeneratorSettings(type: ErrorClass): BadInput<object | null>[] {
  return [
    ['settings null', null, type, /settings: expected an object, received null/],
    [
      'onError 5',
      { onError: 5 },
      type,
      /onError: expected a function that takes an error, received 5 \(number\)/,
    ],
    ['state 5', { state: 5 }, type, /state: expected a state cell .*received 5 \(number\)/],
    ['state {}', { state: {} }, type, /state\.load: expected a state cell .*received undefined/],
  ];
}

/**
 * The start times both flavours refuse with the engine's check, under the setting `key` they
 * name it by (Sonyflake's startTime, snowflake's epoch), for a clock that reads `now`: one
 * ahead of the clock, an invalid Date, and a string. Rows of `never`, to join any flavour's table.
 */
export function badStartTimes(
  key: string,
  now: number,
  errors: { StartTimeAheadError: ErrorClass; InvalidStartTimeError: ErrorClass },
): BadInput<never>[] {
  const ahead = new Date(now + 1).toISOString().replaceAll('.', '\\.');
  return [
    [
      `${key}: ahead of the clock`,
      { [key]: now + 1 } as never,
      errors.StartTimeAheadError,
      new RegExp(`${ahead} is after now`),
    ],
    [
      `${key}: an invalid Date`,
      { [key]: new Date('nope') } as never,
      errors.InvalidStartTimeError,
      /received Invalid Date/,
    ],
    [
      `${key}: a string`,
      { [key]: '2020-01-01' } as never,
      errors.InvalidStartTimeError,
      /"2020-01-01" \(string\)/,
    ],
  ];
}

/**
 * The test both flavours run on create(): a claim its provider resolves to is held by the
 * generator (the claim's ID is the generator's) and released once, by close().
 */
export function itHoldsClaimUntilClose(
  title: string,
  create: (machineId: () => Promise<MachineIdClaim>) => Promise<{ machine: number; close(): Promise<void> }>,
  id: number,
): void {
  it(title, async () => {
    const release = vi.fn();
    const generator = await create(async () => ({ machineId: id, release }));
    expect(generator.machine).toBe(id);
    await generator.close();
    expect(release).toHaveBeenCalledTimes(1);
  });
}
