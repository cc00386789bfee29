import { LeaseLostError } from '@ids/machine-lease/errors';
import type { LeaseKeeper } from '@ids/machine-lease/internal';
import type { LockBackend } from './backend.js';
import { FenceMismatchError, LockReleasedError } from './errors.js';

/** A fence and the name it counts for: what guards compare. */
export interface Fenced {
  /** The lock's name. */
  readonly name: string;
  /** Its fence. */
  readonly fence: bigint;
}

/**
 * A held lock. Its `signal` aborts, with the store's lost-lease error as reason, before the store
 * could give the name to someone else (the keeper's deadline, TTL minus a fifth, on this
 * process's clock) or at once when a keepalive finds the lock gone. Release it with `release()`
 * or `await using`.
 */
export class Lock implements Fenced, AsyncDisposable {
  readonly #fence: bigint;
  readonly #keeper: LeaseKeeper;
  /** Made when `signal` is first read: most locks are released without anyone asking. */
  #controller: AbortController | undefined;
  /** Why the lock stopped being trusted, once it has. */
  #reason: unknown;
  readonly #backend: LockBackend;
  readonly #token: string;
  /** Where the keeper waits to be started (Locks' KeeperStarts), if it still does. */
  readonly #starts: { delete(keeper: LeaseKeeper): void } | undefined;
  #released: Promise<void> | undefined;

  /** Made by `Locks.acquire`, which calls `lost` when the keeper stops trusting the lease. */
  constructor(
    /** The lock's name. */
    readonly name: string,
    fence: bigint,
    token: string,
    keeper: LeaseKeeper,
    backend: LockBackend,
    starts?: { delete(keeper: LeaseKeeper): void },
  ) {
    this.#fence = fence;
    this.#token = token;
    this.#keeper = keeper;
    this.#backend = backend;
    this.#starts = starts;
  }

  /** The keeper's verdict (or a release): aborts the signal, once. */
  lost(reason: unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  /**
   * Strictly above the fence of every earlier holder of this name; pass it to a guarded write.
   * @throws LockReleasedError after release: a fence kept past its lock protects nothing.
   */
  get fence(): bigint {
    this.#checkReleased();
    return this.#fence;
  }

  /** Aborts when the lock can no longer be trusted (reason: the store's lost-lease error) or is released. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      // null: released before anyone read the signal; the reason is made now.
      if (this.#reason !== undefined) this.#controller.abort(this.#reason ?? this.#releasedReason());
    }
    return this.#controller.signal;
  }

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.#released !== undefined;
  }

  /**
   * Throws unless the lock is still trusted: checks the deadline now, for a process that was
   * paused and has not yet run the timer that would have aborted the signal.
   * @throws LockReleasedError after release; the store's lost-lease error once the lease is lost.
   */
  check(): void {
    this.#checkReleased();
    this.#keeper.check();
    if (this.#reason !== undefined) throw this.#reason;
  }

  /**
   * Stops the keepalives, aborts the signal and deletes the lock if it still carries this
   * holder's token, waking the next in line. Idempotent.
   * @throws the store's unavailable error when it could not be reached (the lock then expires
   * by its TTL).
   */
  release(): Promise<void> {
    this.#released ??= this.#release();
    return this.#released;
  }

  /**
   * Not an async function: the backend's own promise is returned, not wrapped in another (a
   * promise and a turn less per release). Nothing here throws: an abort listener's exception
   * is reported by Node, not thrown into the caller of `abort`, and every backend's release is an
   * async function, which rejects rather than throws.
   */
  #release(): Promise<void> {
    this.#keeper.stop();
    this.#starts?.delete(this.#keeper);
    if (this.#reason === undefined) {
      // Only a signal someone holds needs the reason now; a later reader gets it then.
      if (this.#controller) this.lost(this.#releasedReason());
      else this.#reason = null;
    }
    return this.#backend.release(this.name, this.#token);
  }

  /** `await using lock = await locks.acquire(...)` releases at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  #releasedReason(): Error {
    return new LeaseLostError(
      this.#backend.store,
      'released',
      `the lock ${JSON.stringify(this.name)} was released`,
    );
  }

  #checkReleased(): void {
    if (this.#released) {
      throw new LockReleasedError(
        `the lock ${JSON.stringify(this.name)} was used after release: expected a held lock, received a released one (acquire it again)`,
      );
    }
  }
}

/**
 * Orders two fences of the same name: negative, zero or positive as `a` is older, the same or
 * newer. @throws FenceMismatchError for fences of different names (separate counters).
 */
export function compareFences(a: Fenced, b: Fenced): number {
  if (a.name !== b.name) {
    throw new FenceMismatchError(
      `fences count per name: expected two fences of one lock, received ${JSON.stringify(a.name)} and ${JSON.stringify(b.name)}`,
    );
  }
  return a.fence < b.fence ? -1 : a.fence > b.fence ? 1 : 0;
}
