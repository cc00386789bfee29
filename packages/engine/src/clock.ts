import { InvalidArgumentError, received } from './errors.js';
import { realTimerHost, setLongTimeout, type TimerHost } from './timer.js';

/**
 * Where a generator reads the time, and how it waits for it to pass. A fake clock supplies its
 * own waits, so that tests move time forward instead of sleeping. Checked once when a generator
 * is built (see `checkClock`).
 */
export interface Clock {
  /**
   * The time in Unix milliseconds. Fractions are welcome: a clock truncated to whole ms makes
   * each wait for the next tick oversleep (see hiResWallClock). Must be finite: anything else
   * fails with InvalidArgumentError.
   */
  now(): number;
  /**
   * Resolves after `ms` (fractions allowed) on this clock. Optional: without it, the async path
   * waits with a timer.
   */
  sleep?(ms: number): Promise<void>;
  /**
   * Blocks for `ms` (fractions allowed) on this clock. Optional: without it, the sync path
   * waits in `Atomics.wait`.
   */
  sleepSync?(ms: number): void;
}

/** The two time sources a wall clock is built from; tests pass fakes. */
export interface TimeSources {
  /** Unix ms, whole milliseconds, may step (Date.now). */
  wall(): number;
  /** Monotonic ms with sub-ms resolution, never steps (performance.now). */
  monotonic(): number;
  /**
   * Optional: the Unix ms at which `monotonic()` read 0, to sub-ms precision and the same in
   * every thread of the process (performance.timeOrigin). Without it the clock anchors on
   * `wall() - monotonic()`, which is off by up to a millisecond (wall is truncated), by a
   * different amount in each thread.
   */
  origin?(): number;
}

const realSources: TimeSources = {
  wall: () => Date.now(),
  monotonic: () => performance.now(),
  origin: () => performance.timeOrigin,
};

/**
 * A wall clock with sub-millisecond resolution. `Date.now()` alone is truncated to whole ms, so
 * a generator that sleeps "until the next tick" from it oversleeps by the part of the ms already
 * gone; with 1 ms ticks that loses about a quarter of the snowflake ceiling. This clock advances
 * with the monotonic timer and compares itself with `Date.now()` at most once per millisecond;
 * when they disagree by more than a millisecond (the system time was stepped, e.g. by NTP or
 * `date`), it jumps to the wall clock, forwards or backwards, like Go's `time.Now()` would.
 */
export function hiResWallClock(sources: TimeSources = realSources): Clock {
  // Threads sharing one generator state must agree on the time to well under a tick: anchored
  // on Date.now() each thread's clock was off by its own 0-1 ms, so a thread whose clock ran
  // ahead moved the shared state into a tick the others had to wait for. The time origin is
  // one sub-ms anchor for the whole process; the check below still catches a stepped clock.
  let offset = sources.origin?.() ?? sources.wall() - sources.monotonic();
  let checkedAt = Number.NEGATIVE_INFINITY;
  return Object.freeze({
    now(): number {
      const mono = sources.monotonic();
      if (mono - checkedAt >= 1) {
        checkedAt = mono;
        const wall = sources.wall();
        const estimate = offset + mono;
        // Date.now() is the true time truncated, so the estimate belongs in [wall, wall + 1).
        if (estimate < wall - 1 || estimate >= wall + 2) offset = wall - mono;
      }
      return offset + mono;
    },
  });
}

/**
 * The default clock: the wall clock, as Go's `time.Now()`, with sub-ms resolution (see
 * hiResWallClock). It steps back when the system time is corrected backwards.
 */
export const wallClock: Clock = hiResWallClock();

/**
 * A clock that takes the wall time once, when the process started (`performance.timeOrigin`, to
 * sub-ms, the same in every worker thread), and then advances with the monotonic timer, so
 * system time corrections (NTP steps, a manual `date`) do not move it. It drifts from the wall
 * clock by whatever those corrections were; prefer it for a long-lived process whose host clock
 * is unruly. Threads sharing one generator state read the same time from it.
 */
export function monotonicClock(): Clock {
  const anchor = performance.timeOrigin;
  return Object.freeze({ now: () => anchor + performance.now() });
}

// One cell to wait on. Nobody ever notifies it, so Atomics.wait simply times out: a sleep that
// blocks only this thread and burns no CPU, unlike the busy loops of the npm peers. Made on
// first use: a browser page that is not cross-origin isolated has no SharedArrayBuffer, and
// importing the engine there (the inspector page) must not fail.
let cell: Int32Array | undefined;

/** Blocks the calling thread for `ms` (fractions allowed) without spinning. */
export function sleepSync(ms: number): void {
  if (ms > 0) {
    cell ??= new Int32Array(new SharedArrayBuffer(4));
    Atomics.wait(cell, 0, 0, ms);
  }
}

/**
 * How much of the end of a wait `sleep` spends polling with setImmediate instead of a timer:
 * a timer never fires sooner than about 1.1 ms here, so with 1 ms ticks a timer alone sleeps
 * through the next tick too. 1.5 ms covers that; the poll lets the loop turn every iteration.
 */
export const SLEEP_POLL_TAIL_MS = 1.5;

/** Options of `sleep`. */
export interface SleepOptions {
  /** Aborting it ends the sleep: the promise rejects with the signal's reason and no timer stays armed. */
  readonly signal?: AbortSignal | undefined;
  /** Where the time is read and timers are armed (default: performance.now and setTimeout); tests pass a fake. */
  readonly timers?: TimerHost;
}

/**
 * Resolves after `ms` (fractions honoured): a timer for the bulk of the wait (armed in pieces
 * past the timer maximum, see setLongTimeout), then a setImmediate poll of the time for the last
 * `pollTailMs` (default SLEEP_POLL_TAIL_MS; 0 for a timer alone, which may oversleep by about a
 * millisecond). The event loop keeps turning meanwhile (the poll runs once per loop iteration);
 * `ms` <= 0 resolves after one turn.
 */
export function sleep(
  ms: number,
  pollTailMs: number = SLEEP_POLL_TAIL_MS,
  options: SleepOptions = {},
): Promise<void> {
  const { signal, timers = realTimerHost } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const until = timers.now() + ms;
    let cancel = (): void => undefined;
    const onAbort = (): void => {
      cancel();
      reject(signal?.reason);
    };
    const poll = (): void => {
      if (signal?.aborted) return;
      if (timers.now() >= until) {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      } else setImmediate(poll);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (pollTailMs <= 0) {
      // A timer alone: rounded up, since a timer may fire up to a millisecond early by
      // performance.now(), and polling that last fraction would spin.
      cancel = setLongTimeout(poll, Math.max(1, Math.ceil(ms)), { host: timers });
      return;
    }
    const bulk = ms - pollTailMs;
    if (bulk >= 1) cancel = setLongTimeout(poll, bulk, { host: timers });
    else setImmediate(poll);
  });
}

/** Options of a FakeClock. */
export interface FakeClockOptions {
  /**
   * true (default): `sleep` moves the time forward by the amount asked and resolves at once.
   * false: `sleep` resolves only once the test has moved the time to its end (`advance`,
   * `set`), as a real timer would; use it to see what many concurrent callers observe while
   * time passes. `sleepSync` always moves the time (the thread is blocked, time passes).
   */
  readonly autoAdvance?: boolean;
}

/**
 * A clock for tests: time stands still until moved with `set` or `advance`, and sleeping
 * moves it forward by exactly the requested amount instead of waiting (or, with
 * `autoAdvance: false`, waits until the test moves it). Every sleep is recorded in `sleeps`, so
 * a test can assert how long a generator would have waited.
 */
export class FakeClock implements Clock {
  #now: number;
  readonly #autoAdvance: boolean;
  #sleepers: { until: number; wake: () => void }[] = [];
  /** Every wait asked of this clock, in ms, in order (zero and negative waits included). */
  readonly sleeps: number[] = [];

  /** @throws InvalidArgumentError unless `startMs` (default 0, Unix time 0) is finite ms or a valid Date. */
  constructor(startMs: number | Date = 0, options: FakeClockOptions = {}) {
    this.#now = checkMs(startMs instanceof Date ? startMs.getTime() : startMs, 'FakeClock start');
    this.#autoAdvance = options.autoAdvance ?? true;
  }

  /** The time it was set to, plus every advance and sleep since. */
  now(): number {
    return this.#now;
  }

  /**
   * Sets the time (backwards too: that is how tests step the clock back).
   * @throws InvalidArgumentError unless `ms` is finite ms or a valid Date.
   */
  set(ms: number | Date): void {
    this.#now = checkMs(ms instanceof Date ? ms.getTime() : ms, 'FakeClock.set');
    this.#wake();
  }

  /**
   * Moves the time by `ms`; a negative amount steps it back.
   * @throws InvalidArgumentError unless `ms` is finite.
   */
  advance(ms: number): void {
    this.#now += checkMs(ms, 'FakeClock.advance');
    this.#wake();
  }

  /** How many `sleep` calls are waiting for the time to move (autoAdvance false only). */
  get sleeping(): number {
    return this.#sleepers.length;
  }

  /** Records the wait; moves the time forward by it and resolves at once, or (autoAdvance false) resolves once the time gets there. */
  sleep(ms: number): Promise<void> {
    if (this.#autoAdvance) {
      this.sleepSync(ms);
      return Promise.resolve();
    }
    this.sleeps.push(ms);
    const until = this.#now + Math.max(0, ms);
    if (until <= this.#now) return Promise.resolve();
    return new Promise((wake) => this.#sleepers.push({ until, wake }));
  }

  /** Records the wait and moves the time forward by it (by nothing for `ms` <= 0). */
  sleepSync(ms: number): void {
    this.sleeps.push(ms);
    if (ms > 0) this.#now += ms;
    this.#wake();
  }

  #wake(): void {
    if (this.#sleepers.length === 0) return;
    const due = this.#sleepers.filter((s) => s.until <= this.#now);
    if (due.length === 0) return;
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const sleeper of due) sleeper.wake();
  }
}

function checkMs(ms: number, what: string): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new InvalidArgumentError(`${what}: expected finite milliseconds, received ${received(ms)}`);
  }
  return ms;
}

/** A `clock` option, which every setting of @ids spells the same way: absent, the wall clock; else checked (checkClock). */
export function clockOption(clock: unknown): Clock {
  return clock === undefined ? wallClock : checkClock(clock);
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
