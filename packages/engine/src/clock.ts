import { InvalidArgumentError, received } from './errors.js';

/**
 * Where a generator reads the time, and how it waits for it to pass. `now()` returns Unix
 * milliseconds (fractions allowed). `sleep` and `sleepSync` are optional: a clock without them
 * waits with a timer (async path) and `Atomics.wait` (sync path). A fake clock supplies its own,
 * so that tests move time forward instead of sleeping.
 */
export interface Clock {
  now(): number;
  sleep?(ms: number): Promise<void>;
  sleepSync?(ms: number): void;
}

/** The wall clock, `Date.now()`: Go's `time.Now()`. It can step back when the system time is corrected. */
export const wallClock: Clock = Object.freeze({ now: () => Date.now() });

/**
 * A clock that reads the wall clock once and then advances with the monotonic timer, so system
 * time corrections (NTP steps, a manual `date`) do not move it. It drifts from the wall clock by
 * whatever those corrections were; prefer it for a long-lived process whose host clock is unruly.
 */
export function monotonicClock(): Clock {
  const anchor = Date.now() - performance.now();
  return Object.freeze({ now: () => anchor + performance.now() });
}

// One cell to wait on. Nobody ever notifies it, so Atomics.wait simply times out: a sleep that
// blocks only this thread and burns no CPU, unlike the busy loops of the npm peers.
const cell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the calling thread for `ms` (fractions allowed) without spinning. */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(cell, 0, 0, ms);
}

/** Resolves after `ms`; the event loop keeps turning meanwhile. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/**
 * A clock for tests: time stands still until moved with `set` or `advance`, and sleeping
 * moves it forward by exactly the requested amount instead of waiting. Every sleep is recorded
 * in `sleeps`, so a test can assert how long a generator would have waited.
 */
export class FakeClock implements Clock {
  #now: number;
  readonly sleeps: number[] = [];

  constructor(startMs: number | Date = 0) {
    this.#now = checkMs(startMs instanceof Date ? startMs.getTime() : startMs, 'FakeClock start');
  }

  now(): number {
    return this.#now;
  }

  /** Sets the time (backwards too: that is how tests step the clock back). */
  set(ms: number | Date): void {
    this.#now = checkMs(ms instanceof Date ? ms.getTime() : ms, 'FakeClock.set');
  }

  advance(ms: number): void {
    this.#now += checkMs(ms, 'FakeClock.advance');
  }

  sleep(ms: number): Promise<void> {
    this.sleepSync(ms);
    return Promise.resolve();
  }

  sleepSync(ms: number): void {
    this.sleeps.push(ms);
    if (ms > 0) this.#now += ms;
  }
}

function checkMs(ms: number, what: string): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new InvalidArgumentError(`${what}: expected finite milliseconds, received ${received(ms)}`);
  }
  return ms;
}

/** Checks a user-supplied clock once, at construction, so a bad one fails there and not mid-run. */
export function checkClock(clock: unknown): Clock {
  if (typeof clock !== 'object' || clock === null || typeof (clock as Clock).now !== 'function') {
    throw new InvalidArgumentError(
      `clock: expected an object with a now() method, received ${received(clock)}`,
    );
  }
  const c = clock as Clock;
  for (const key of ['sleep', 'sleepSync'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'function') {
      throw new InvalidArgumentError(
        `clock.${key}: expected a function or nothing, received ${received(c[key])}`,
      );
    }
  }
  const sample = c.now();
  if (typeof sample !== 'number' || !Number.isFinite(sample)) {
    throw new InvalidArgumentError(
      `clock.now(): expected finite Unix milliseconds, received ${received(sample)}`,
    );
  }
  return c;
}
