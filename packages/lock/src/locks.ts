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
import { LeaseKeeper, type Scheduler, schedulerOf } from '@ids/machine-lease/internal';
import type { LockBackend, Taken, TakeRequest } from './backend.js';
import { LockAbortedError, LockTimeoutError } from './errors.js';
import { Lock } from './lock.js';
import { type AcquireOptions, type CheckedAcquire, checkAcquire, checkName, leaseTiming } from './options.js';

/** How long past its budget an attempt may run before it is given up (see `#attempt`). */
const ATTEMPT_GRACE_MS = 100;

/**
 * Named locks on one store. Waiting is FIFO and event-driven (the backend wakes the next in
 * line); holding is a lease kept alive and fenced by @ids/machine-lease's LeaseKeeper, the same
 * code that fences machine-ID claims.
 */
export class Locks {
  readonly #backend: LockBackend;
  readonly #timeoutMs: number;
  readonly #scheduler: Scheduler;

  /** `options.scheduler` is a test seam (a fake clock), as for the lease holders. */
  constructor(backend: LockBackend, options: { readonly timeoutMs: number }) {
    this.#backend = backend;
    this.#timeoutMs = options.timeoutMs;
    this.#scheduler = schedulerOf(options);
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
  async acquire(name: string, options?: AcquireOptions): Promise<Lock> {
    const checked = checkAcquire(options);
    const lock = await this.#acquire(checkName(name), checked, true);
    return lock as Lock;
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
    // Ends a wait for a turn: the caller's signal, or waitMs on the scheduler counted from now.
    // Without either it is made at the first wait: an uncontended acquire needs none.
    const started = this.#scheduler.now();
    let stop: AbortController | undefined;
    let timedOut = false;
    let cancelTimer = () => undefined as unknown;
    const onAbort = () => stop?.abort();
    const waiting = (): AbortSignal => {
      if (stop) return stop.signal;
      const controller = new AbortController();
      stop = controller;
      if (o.waitMs !== undefined && o.waitMs > 0) {
        const left = Math.max(0, o.waitMs - (this.#scheduler.now() - started));
        cancelTimer = this.#scheduler.setTimer(() => {
          timedOut = true;
          controller.abort();
        }, left);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      return controller.signal;
    };
    if (wait && (o.waitMs !== undefined || signal)) waiting();
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
          const lock = await this.#hold(name, token, o.ttlMs, taken, sentAt);
          if (lock) return lock;
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
        if (o.waitMs === 0) timedOut = true;
        if (!timedOut && !signal?.aborted) await backend.turn(name, token, waiting());
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
      cancelTimer();
      signal?.removeEventListener('abort', onAbort);
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
   * Starts the keeper, trusted from when the winning attempt was sent, and waits out a
   * quarantine the store asked for before handing the lock out. Fails closed: a take whose
   * answer came after the trust window (a store or a process too busy) fences the keeper at its
   * start, and such a lock is released and never handed out (undefined).
   */
  async #hold(
    name: string,
    token: string,
    ttlMs: number,
    taken: Taken,
    sentAt: number,
  ): Promise<Lock | undefined> {
    const backend = this.#backend;
    let onLost: (reason: unknown) => void = () => undefined;
    const keeper = new LeaseKeeper(
      leaseTiming(ttlMs, this.#timeoutMs),
      this.#scheduler,
      (ms) => backend.extend(name, token, ttlMs, ms),
      (reason) => onLost(reason),
      sentAt,
      backend.store,
    );
    const lock = new Lock(name, taken.fence, token, keeper, backend);
    onLost = (reason) => lock.lost(reason);
    keeper.start();
    if (taken.quarantineMs > 0) {
      const signal = lock.signal;
      await new Promise<void>((resolve) => {
        const cancel = this.#scheduler.setTimer(resolve, taken.quarantineMs);
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
    if (!keeper.check()) {
      await lock.release().catch(() => undefined);
      return undefined;
    }
    return lock;
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
