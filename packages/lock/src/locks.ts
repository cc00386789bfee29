import { randomBytes } from 'node:crypto';

/**
 * Tokens: this process's random part and a counter. Unique, which is all a token must be (it
 * names a holding; it is not a secret), without a call into the random source per acquire.
 */
const PROCESS_TOKEN = randomBytes(12).toString('hex');
let tokens = 0;
const newToken = () => `${PROCESS_TOKEN}${(tokens++).toString(16).padStart(8, '0')}`;

import { LeaseKeeper, type Scheduler, schedulerOf } from '@ids/machine-lease/internal';
import type { LockBackend, Taken } from './backend.js';
import { LockAbortedError, LockTimeoutError } from './errors.js';
import { Lock } from './lock.js';
import { type AcquireOptions, type CheckedAcquire, checkAcquire, checkName, leaseTiming } from './options.js';

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
   * @throws InvalidArgumentError for a bad name or option; LockTimeoutError after `waitMs`;
   * LockAbortedError when `signal` aborts; the store's errors that waiting cannot fix.
   */
  async acquire(name: string, options?: AcquireOptions): Promise<Lock> {
    const checked = checkAcquire(options);
    const lock = await this.#acquire(checkName(name), checked, true);
    return lock as Lock;
  }

  /** One attempt: the lock, or undefined when someone holds or waits for it. Same throws as acquire. */
  tryAcquire(name: string, options?: Pick<AcquireOptions, 'ttlMs'>): Promise<Lock | undefined> {
    const checked = checkAcquire({ ...(options?.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }) });
    return this.#acquire(checkName(name), checked, false);
  }

  /** Runs `fn` holding `name`, and releases it however `fn` ends. */
  async withLock<T>(name: string, fn: (lock: Lock) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
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
    try {
      for (;;) {
        const sentAt = this.#scheduler.now();
        let taken: Taken | undefined;
        try {
          taken = await backend.take(name, token, o.ttlMs, wait);
        } catch (error) {
          // Waiters outlast a store that is restarting; a single attempt reports it.
          if (!wait || !backend.transient(error)) throw error;
        }
        if (taken) return await this.#hold(name, token, o.ttlMs, taken, sentAt);
        if (!wait) {
          await backend.leave(name, token);
          return undefined;
        }
        if (o.waitMs === 0) timedOut = true;
        if (!timedOut && !signal?.aborted) await backend.turn(name, token, waiting());
        if (timedOut) throw new LockTimeoutError(name, o.waitMs ?? 0);
        if (signal?.aborted) throw this.#aborted(name, signal);
      }
    } catch (error) {
      await backend.leave(name, token).catch(() => undefined);
      throw error;
    } finally {
      cancelTimer();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Starts the keeper, trusted from when the winning attempt was sent, and waits out a
   * quarantine the store asked for before handing the lock out.
   */
  async #hold(name: string, token: string, ttlMs: number, taken: Taken, sentAt: number): Promise<Lock> {
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
