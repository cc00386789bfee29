import { randomBytes } from 'node:crypto';

/**
 * Tokens: this process's random part and a counter. Unique, which is all a token must be (it
 * names a holding; it is not a secret), without a call into the random source per acquire.
 */
const PROCESS_TOKEN = randomBytes(12).toString('hex');
let tokens = 0;
const newToken = () => `${PROCESS_TOKEN}${(tokens++).toString(16).padStart(8, '0')}`;

import { InvalidArgumentError } from '@ids/engine';
import { errorText, received } from '@ids/engine/internal';
import { StoreUnavailableError } from '@ids/machine-lease/errors';
import { type KeeperTiming, LeaseKeeper, type Scheduler, schedulerOf } from '@ids/machine-lease/internal';
import type { LockBackend, Taken, TakeRequest } from './backend.js';
import { LockAbortedError, LockTimeoutError } from './errors.js';
import { Lock } from './lock.js';
import { type AcquireOptions, type CheckedAcquire, checkAcquire, checkName, leaseTiming } from './options.js';

/** How long past its budget an attempt may run before it is given up (see `#attempt`). */
const ATTEMPT_GRACE_MS = 100;

/** Whether a lock just taken is still within its lease's trust window (its keeper checks now). */
function trusted(lock: Lock): boolean {
  try {
    lock.check();
    return true;
  } catch {
    return false;
  }
}

/**
 * What ends one acquire's wait for a turn: the caller's signal, or waitMs on the scheduler
 * counted from the acquire's start. An object, not closures made per acquire: most acquires
 * never wait.
 */
class Waiting {
  readonly #controller = new AbortController();
  readonly #signal: AbortSignal | undefined;
  #cancelTimer: (() => void) | undefined;
  /** Whether waitMs ran out. */
  timedOut = false;

  constructor(scheduler: Scheduler, o: CheckedAcquire, started: number) {
    if (o.waitMs !== undefined && o.waitMs > 0) {
      const left = Math.max(0, o.waitMs - (scheduler.now() - started));
      this.#cancelTimer = scheduler.setTimer(() => {
        this.timedOut = true;
        this.#controller.abort();
      }, left);
    }
    this.#signal = o.signal;
    this.#signal?.addEventListener('abort', this, { once: true });
  }

  /** Aborts when the wait must end. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The caller's signal aborted (an EventListener object: no closure to make). */
  handleEvent(): void {
    this.#controller.abort();
  }

  /** The acquire is over: the timer and the listener go. */
  end(): void {
    this.#cancelTimer?.();
    this.#signal?.removeEventListener('abort', this);
  }
}

/**
 * Starts the lease keepers of locks just taken, each within half a keepalive interval of its
 * grant, with one timer for all of them rather than one armed per acquire and, as most locks are
 * released before their first keepalive, cleared again: a timer is a measurable part of an
 * uncontended acquire + release. Nothing a keeper promises moves: it trusts the lease from the
 * grant whenever it starts (`check()` works before), its first keepalive comes at most half an
 * interval later than it would have (still an interval and a half before the trust window
 * ends), and a lock whose window is nearly over when taken is started at once (see `#hold`).
 */
class KeeperStarts {
  readonly #scheduler: Scheduler;
  readonly #waiting = new Set<LeaseKeeper>();
  #cancel: (() => void) | undefined;
  /** Scheduler time at which the armed timer fires. */
  #due = Number.POSITIVE_INFINITY;

  constructor(scheduler: Scheduler) {
    this.#scheduler = scheduler;
  }

  /** Starts `keeper` within `withinMs`, unless it is stopped (its lock released) before. */
  add(keeper: LeaseKeeper, withinMs: number): void {
    this.#waiting.add(keeper);
    const due = this.#scheduler.now() + withinMs;
    if (this.#cancel !== undefined && this.#due <= due) return;
    this.#cancel?.();
    this.#due = due;
    this.#cancel = this.#scheduler.setTimer(() => this.#startAll(), withinMs);
  }

  /** `keeper`'s lock was released: nothing to start, and nothing kept for it. */
  delete(keeper: LeaseKeeper): void {
    this.#waiting.delete(keeper);
  }

  /** How many keepers wait to be started: for a test. */
  get size(): number {
    return this.#waiting.size;
  }

  #startAll(): void {
    this.#cancel = undefined;
    this.#due = Number.POSITIVE_INFINITY;
    const keepers = [...this.#waiting];
    this.#waiting.clear();
    for (const keeper of keepers) keeper.start();
  }
}

/**
 * Named locks on one store. Waiting is FIFO and event-driven (the backend wakes the next in
 * line); holding is a lease kept alive and fenced by @ids/machine-lease's LeaseKeeper, the same
 * code that fences machine-ID claims.
 */
export class Locks {
  readonly #backend: LockBackend;
  readonly #timeoutMs: number;
  readonly #scheduler: Scheduler;
  readonly #starts: KeeperStarts;
  #lastTiming: KeeperTiming | undefined;

  /** `options.scheduler` is a test seam (a fake clock), as for the lease holders. */
  constructor(backend: LockBackend, options: { readonly timeoutMs: number }) {
    this.#backend = backend;
    this.#timeoutMs = options.timeoutMs;
    this.#scheduler = schedulerOf(options);
    this.#starts = new KeeperStarts(this.#scheduler);
  }

  /** The store's name: `redis`, `etcd` or `zookeeper`. */
  get store(): string {
    return this.#backend.store;
  }

  /**
   * Waits for `name` (first come, first served) and holds it.
   * @throws InvalidArgumentError for a bad name or option; LockTimeoutError after `waitMs` when
   * the lock was seen held; StoreUnavailableError after `waitMs` (or at once with
   * `waitMs: 0`) when the store could not be reached at the last attempt; LockAbortedError when
   * `signal` aborts; the store's errors that waiting cannot fix.
   */
  acquire(name: string, options?: AcquireOptions): Promise<Lock> {
    // Not an async function wrapping #acquire's promise (one more await per acquire); a bad
    // argument still rejects, never throws.
    try {
      return this.#acquire(checkName(name), checkAcquire(options), true) as Promise<Lock>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** One attempt: the lock, or undefined when someone holds or waits for it. Same throws as acquire. */
  async tryAcquire(name: string, options?: Pick<AcquireOptions, 'ttlMs'>): Promise<Lock | undefined> {
    const checked = checkAcquire(options, ['ttlMs']);
    return this.#acquire(checkName(name), checked, false);
  }

  /**
   * Runs `fn` holding `name`, and releases it however `fn` ends.
   * @throws InvalidArgumentError when `fn` is not a function, before anything is sent.
   */
  async withLock<T>(name: string, fn: (lock: Lock) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    if (typeof fn !== 'function') {
      throw new InvalidArgumentError(
        `expected a function to run holding the lock, received ${received(fn)}`,
        {
          option: 'fn',
        },
      );
    }
    const lock = await this.acquire(name, options);
    try {
      return await fn(lock);
    } finally {
      await lock.release();
    }
  }

  /** Closes the backend's connections; locks still held expire by their TTL. */
  close(): Promise<void> {
    return this.#backend.close();
  }

  async #acquire(name: string, o: CheckedAcquire, wait: boolean): Promise<Lock | undefined> {
    const { signal } = o;
    if (signal?.aborted) throw this.#aborted(name, signal);
    const token = newToken();
    const backend = this.#backend;
    const started = this.#scheduler.now();
    // Ends a wait for a turn: made at once when waitMs or a signal bounds the wait, else at the
    // first wait: an uncontended acquire needs none.
    let waiting =
      wait && (o.waitMs !== undefined || signal) ? new Waiting(this.#scheduler, o, started) : undefined;
    // The store's error at the last attempt, if it failed: a wait that ends then says the store
    // was unreachable, never that someone held the lock.
    let unreachable: unknown;
    try {
      for (;;) {
        const sentAt = this.#scheduler.now();
        // waitMs bounds the whole acquire, connecting included: an attempt gets what is left
        // (waitMs 0 is one attempt, given the store's timeoutMs like tryAcquire).
        const budgetMs =
          o.waitMs === undefined || o.waitMs === 0 ? undefined : Math.max(1, o.waitMs - (sentAt - started));
        let taken: Taken | undefined;
        try {
          taken = await this.#attempt({ name, token, ttlMs: o.ttlMs, join: wait, budgetMs });
          unreachable = undefined;
        } catch (error) {
          // Waiters outlast a store that is restarting; a single attempt reports it.
          if (!wait || !backend.transient(error)) throw error;
          unreachable = error;
        }
        if (taken) {
          const lock = this.#hold(name, token, o.ttlMs, taken.fence, sentAt);
          if (taken.quarantineMs > 0) await this.#quarantine(lock, taken.quarantineMs);
          if (trusted(lock)) return lock;
          await lock.release().catch(() => undefined);
          // Taken, but answered too late to trust, and released: as if the store had not answered.
          unreachable = new StoreUnavailableError(
            backend.store,
            'lock',
            `taking the lock ${JSON.stringify(name)}: the store's answer came after the lease's trust window (TTL minus a fifth, from the request) had passed; the lock was released, not handed out`,
          );
          if (!wait) throw unreachable;
        } else if (!wait) {
          await backend.leave(name, token);
          return undefined;
        }
        let timedOut = o.waitMs === 0 || waiting?.timedOut === true;
        if (!timedOut && !signal?.aborted) {
          waiting ??= new Waiting(this.#scheduler, o, started);
          await backend.turn(name, token, waiting.signal);
          timedOut = waiting.timedOut;
        }
        if (timedOut) {
          if (unreachable === undefined) throw new LockTimeoutError(name, o.waitMs ?? 0);
          throw new StoreUnavailableError(
            backend.store,
            'lock',
            `the lock ${JSON.stringify(name)} was not taken within waitMs = ${o.waitMs ?? 0} ms: expected the store to answer, received at the last attempt: ${errorText(unreachable)}`,
            { cause: unreachable },
          );
        }
        if (signal?.aborted) throw this.#aborted(name, signal);
      }
    } catch (error) {
      const leaving = backend.leave(name, token).catch(() => undefined);
      // A store that did not answer the last attempt would make the leave wait out timeoutMs
      // past waitMs: it goes on in the background (the place expires by its TTL anyway).
      if (unreachable === undefined) await leaving;
      throw error;
    } finally {
      waiting?.end();
    }
  }

  /**
   * One take, ended within `budgetMs` (plus a little, so that the backend's own bound, with its
   * better message, fires first) whatever the backend does: a store can spend its timeoutMs on
   * each of several requests of one attempt. A take that succeeds after it was given up is
   * released at once, so no lock is left held by nobody.
   */
  #attempt(request: TakeRequest): Promise<Taken | undefined> {
    const { name, token, budgetMs } = request;
    const backend = this.#backend;
    const taking = backend.take(request);
    if (budgetMs === undefined) return taking;
    return new Promise<Taken | undefined>((resolve, reject) => {
      let over = false;
      const cancel = this.#scheduler.setTimer(() => {
        over = true;
        reject(
          new StoreUnavailableError(
            backend.store,
            'lock',
            `taking the lock ${JSON.stringify(name)}: no answer within what was left of waitMs (${budgetMs} ms)`,
          ),
        );
      }, budgetMs + ATTEMPT_GRACE_MS);
      taking.then(
        (taken) => {
          cancel();
          if (!over) resolve(taken);
          else if (taken) backend.release(name, token).catch(() => undefined);
        },
        (error: unknown) => {
          cancel();
          if (!over) reject(error);
        },
      );
    });
  }

  /**
   * Makes the lock and starts its keeper, trusted from when the winning attempt was sent. The
   * caller then waits out a quarantine the store asked for, and fails closed: a take whose
   * answer came after the trust window (a store or a process too busy) fences the keeper at its
   * start, and such a lock is released and never handed out.
   */
  #hold(name: string, token: string, ttlMs: number, fence: bigint, sentAt: number): Lock {
    const backend = this.#backend;
    // Inline callbacks, not named closures: the build keeps function names (keepNames), a
    // defineProperty per named closure made, and this runs once per acquire.
    let lock: Lock | undefined;
    const timing = this.#timing(ttlMs);
    const keeper = new LeaseKeeper(
      timing,
      this.#scheduler,
      (ms) => backend.extend(name, token, ttlMs, ms),
      (reason) => lock?.lost(reason),
      sentAt,
      backend.store,
    );
    lock = new Lock(name, fence, token, keeper, backend, this.#starts);
    // Started within half an interval (KeeperStarts), unless the trust window is so far gone
    // (a slow answer) that the watchdog must be armed now: a keeper arms it at start when the
    // deadline is within an interval, and a start half an interval late would arm it late.
    if (keeper.deadline - this.#scheduler.now() > 2 * timing.intervalMs) {
      this.#starts.add(keeper, timing.intervalMs / 2);
    } else keeper.start();
    return lock;
  }

  /**
   * Holds `lock` for `ms` before it is handed out (see Taken.quarantineMs).
   * @throws the lock's lost-lease reason, the lock released, when it is lost meanwhile.
   */
  async #quarantine(lock: Lock, ms: number): Promise<void> {
    const signal = lock.signal;
    await new Promise<void>((resolve) => {
      const cancel = this.#scheduler.setTimer(resolve, ms);
      signal.addEventListener('abort', () => {
        cancel();
        resolve();
      });
    });
    if (signal.aborted) {
      const reason = signal.reason;
      await lock.release().catch(() => undefined);
      throw reason;
    }
  }

  /** The keeper's timing for `ttlMs`: the last one made is kept, as most acquires share a TTL. */
  #timing(ttlMs: number): KeeperTiming {
    if (this.#lastTiming?.ttlMs !== ttlMs) this.#lastTiming = leaseTiming(ttlMs, this.#timeoutMs);
    return this.#lastTiming;
  }

  #aborted(name: string, signal: AbortSignal): LockAbortedError {
    return new LockAbortedError(
      `the wait for the lock ${JSON.stringify(name)} was aborted by the signal given`,
      {
        cause: signal.reason,
      },
    );
  }
}
