import { errorText, setLongTimeout, TIMER_MAX_MS } from '@ids/engine/internal';
import { LeaseLostError } from './errors.js';

/**
 * Monotonic time in ms and one-shot timers: where the keeper reads the time and waits. Tests
 * pass a fake one and move time by hand.
 */
export interface Scheduler {
  /** Monotonic time in ms. */
  now(): number;
  /** Calls `fn` after `ms`; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
  /** Unix time in ms, to compare with times recorded in the store. Default: Date.now(). */
  wallNow?(): number;
}

/** performance.now() and unref'd timers: a lease kept alive never keeps the process alive by itself. */
export const realScheduler: Scheduler = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimer(fn, ms) {
    if (ms > TIMER_MAX_MS) return setLongTimeout(fn, ms, { unref: true });
    // A timer Node can arm as it is: one Timeout and one closure, not setLongTimeout's three
    // (a keeper arms one per lock acquired, on the hot path of an uncontended lock).
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** What a timer not armed cancels. */
const noop = (): void => undefined;

/**
 * The scheduler a provider's keeper runs on: `realScheduler`, unless a test passed its own as
 * `scheduler` in the provider's options (an undocumented seam, so that tests need not sleep).
 */
export function schedulerOf(options: object): Scheduler {
  return (options as { readonly scheduler?: Scheduler }).scheduler ?? realScheduler;
}

/** The four durations a keeper works with, in ms. */
export interface KeeperTiming {
  /** The lease's TTL as granted, in ms. */
  readonly ttlMs: number;
  /** How long before the server could expire the lease the holder stops trusting it. */
  readonly marginMs: number;
  /** Time between keepalives. */
  readonly intervalMs: number;
  /** Longest a single keepalive may take. */
  readonly timeoutMs: number;
}

/**
 * One keepalive round trip, given how long it may take: resolves once the store confirms the
 * lease alive; rejects when it does not (a LeaseLostError of kind 'lease-expired' or
 * 'key-lost' when the store says the lease is gone, anything else for "could not ask").
 */
export type Keepalive = (timeoutMs: number) => Promise<void>;

/**
 * Keeps a lease alive and decides, from time alone, when it can no longer be trusted.
 *
 * The rule: the store expires a lease TTL after the last keepalive it received, and it received
 * that keepalive after we sent it. So a keepalive sent at `t` and confirmed proves the lease lives
 * until at least `t + TTL` on the server, and the holder may trust it until
 * `deadline = t + TTL - margin` (the margin absorbs clock-rate differences and a late timer).
 * The keeper fences, and never unfences, at the first of:
 * - a keepalive that fails (refused, or the store unreachable): at once, not TTL later;
 * - the deadline passing with no newer confirmed keepalive (etcd3's own Lease waits 2 x TTL and
 *   measures from the reply, not the request: both too late; Redis clients have no such loop);
 * - `check()` finding the deadline passed, for a thread too busy to run timers.
 */
export class LeaseKeeper {
  readonly #timing: KeeperTiming;
  readonly #scheduler: Scheduler;
  readonly #keepalive: Keepalive;
  readonly #onLost: (reason: LeaseLostError) => void;
  readonly #store: string;
  #lastOk: number;
  #lost: LeaseLostError | null = null;
  #stopped = false;
  #inFlight = false;
  #cancelBeat: () => void = noop;
  #cancelWatchdog: () => void = noop;
  #watching = false;

  /**
   * @param grantedAt scheduler time at which the lease grant (or the last keepalive known to
   * have succeeded) was sent.
   * @param store the store's name, for the LeaseLostError the keeper makes.
   */
  constructor(
    timing: KeeperTiming,
    scheduler: Scheduler,
    keepalive: Keepalive,
    onLost: (reason: LeaseLostError) => void,
    grantedAt: number,
    store: string,
  ) {
    this.#store = store;
    this.#timing = timing;
    this.#scheduler = scheduler;
    this.#keepalive = keepalive;
    this.#onLost = onLost;
    this.#lastOk = grantedAt;
  }

  /** Scheduler time until which the lease is trusted. */
  get deadline(): number {
    return this.#lastOk + this.#timing.ttlMs - this.#timing.marginMs;
  }

  /** The lease's TTL in ms, as the keeper counts it. */
  get ttlMs(): number {
    return this.#timing.ttlMs;
  }

  /** Send time of the newest confirmed keepalive (or of the grant). */
  get lastOk(): number {
    return this.#lastOk;
  }

  /** Why the lease is no longer trusted, or null while it is. */
  get lost(): LeaseLostError | null {
    return this.#lost;
  }

  /**
   * Starts the keepalive beat, and the deadline watchdog at the first beat: that beat comes
   * before the deadline (a keepalive interval is a third of the trust window), so until then the
   * watchdog would have nothing to watch, and a lease released sooner (most locks) arms one
   * timer, not two. A beat that runs late, past the deadline, fences at once (`#beat` checks).
   */
  start(): void {
    if (this.#stopped || this.#lost) return;
    this.#scheduleBeat();
    if (this.deadline - this.#scheduler.now() <= this.#timing.intervalMs) this.#armWatchdog();
  }

  /** True while the lease is trusted; fences (synchronously) when the deadline has passed. */
  check(): boolean {
    if (this.#lost === null && !this.#stopped && this.#scheduler.now() >= this.deadline) {
      this.#fence('deadline', this.#deadlineMessage());
    }
    return this.#lost === null;
  }

  /** Stops the timers; the lease is then neither kept nor watched. */
  stop(): void {
    this.#stopped = true;
    this.#cancelBeat();
    this.#cancelWatchdog();
  }

  /** Fences from outside (the claim key was deleted, a record write found the key taken). */
  fence(reason: LeaseLostError): void {
    if (this.#lost !== null || this.#stopped) return;
    this.#lost = reason;
    this.stop();
    this.#onLost(reason);
  }

  #fence(kind: LeaseLostError['kind'], message: string, cause?: unknown): void {
    this.fence(new LeaseLostError(this.#store, kind, message, cause === undefined ? undefined : { cause }));
  }

  #deadlineMessage(): string {
    const { ttlMs, marginMs } = this.#timing;
    const since = Math.round(this.#scheduler.now() - this.#lastOk);
    return `no keepalive confirmed for ${since} ms; the lease (TTL ${ttlMs} ms) is trusted for TTL minus the fencing margin (${marginMs} ms) after the last one`;
  }

  #scheduleBeat(): void {
    this.#cancelBeat = this.#scheduler.setTimer(() => {
      if (this.#stopped) return;
      if (!this.#watching) this.#armWatchdog();
      this.#beat();
      this.#scheduleBeat();
    }, this.#timing.intervalMs);
  }

  #armWatchdog(): void {
    this.#cancelWatchdog();
    this.#watching = true;
    const left = this.deadline - this.#scheduler.now();
    if (left <= 0) {
      this.check();
      return;
    }
    this.#cancelWatchdog = this.#scheduler.setTimer(() => {
      if (this.#stopped) return;
      // A confirmation may have moved the deadline since this timer was set.
      if (this.check()) this.#armWatchdog();
    }, left);
  }

  #beat(): void {
    // One keepalive at a time: a slow one is still the best evidence coming.
    if (this.#inFlight || !this.check()) return;
    const sentAt = this.#scheduler.now();
    const timeout = Math.min(this.#timing.timeoutMs, this.deadline - sentAt);
    this.#inFlight = true;
    this.#keepalive(timeout).then(
      () => {
        this.#inFlight = false;
        if (this.#lost !== null || this.#stopped) return;
        // Replies can come back out of order after a reconnect: keep the newest send time.
        if (sentAt > this.#lastOk) {
          this.#lastOk = sentAt;
          this.#armWatchdog();
        }
      },
      (error: unknown) => {
        this.#inFlight = false;
        if (this.#stopped) return;
        if (error instanceof LeaseLostError) this.fence(error);
        else {
          const reason = errorText(error);
          this.#fence('keepalive-failed', `a keepalive failed: ${reason}`, error);
        }
      },
    );
  }
}
