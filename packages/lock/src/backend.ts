import { StoreUnavailableError } from '@ids/machine-lease/errors';

/** A lock taken: its fence, and how long to hold it before using it (see `quarantineMs`). */
export interface Taken {
  /** The fence of this holding: above every fence handed out for the name before. */
  readonly fence: bigint;
  /**
   * How long, in ms from the reply, the holder must keep the lock before trusting it: set by a
   * store that may have forgotten an earlier holder (Redis restarted without persistence), who
   * fences by itself within one TTL.
   */
  readonly quarantineMs: number;
}

/** One attempt to take a lock, as `Locks` asks it of a backend (see LockBackend.take). */
export interface TakeRequest {
  /** The lock's name (checked by checkName). */
  readonly name: string;
  /** The acquire's token: unique, one per acquire. */
  readonly token: string;
  /** How long the lock is held once taken, in ms. */
  readonly ttlMs: number;
  /** Whether the token keeps (or takes) a place in line when the name is held. */
  readonly join: boolean;
  /** What is left of the acquire's `waitMs`, when it has one. */
  readonly budgetMs: number | undefined;
}

/**
 * What a store does for the locks: the seam a backend (Redis, etcd, ZooKeeper) plugs into. The
 * store owns its keys and its notifications; `Locks` owns the waiting, the timing and the
 * fencing (through @ids/machine-lease's LeaseKeeper).
 *
 * The rule every backend keeps, as for leases: once `take`, or an `extend` sent at time `t`,
 * resolves, no other token can take the name before `t + ttlMs`.
 */
export interface LockBackend {
  /** The store's name, as its lease errors carry it in `store`: `redis`, `etcd`, `zookeeper`. */
  readonly store: string;
  /**
   * One attempt to take `name` for `token`. When the name is held, or
   * others wait ahead, resolves undefined; with `join`, `token` keeps (or takes) its place in
   * line (FIFO). A store whose attempts always join (etcd) is asked to `leave` after a refusal.
   * `budgetMs`, when given, is what is left of the acquire's `waitMs`: the attempt, connecting
   * included, ends within it (with the store's unavailable error) rather than within `timeoutMs`.
   */
  take(request: TakeRequest): Promise<Taken | undefined>;
  /** Compare-and-extend by `ttlMs`; rejects with a LeaseLostError (kind `key-lost` or `lease-expired`) when `token` no longer holds `name`. */
  extend(name: string, token: string, ttlMs: number, timeoutMs: number): Promise<void>;
  /** Compare-and-delete, and wakes the next in line. A name `token` does not hold is left alone. */
  release(name: string, token: string): Promise<void>;
  /** Gives up `token`'s place in line (a wait that ended without the lock). */
  leave(name: string, token: string): Promise<void>;
  /**
   * Resolves when `token` should try again: the store said it is `token`'s turn (also when it
   * said so while the attempt that put `token` in line was still on its way back), or a bounded
   * fallback poll ran out; at once when `signal` aborts.
   */
  turn(name: string, token: string, signal: AbortSignal): Promise<void>;
  /** Whether an attempt's error is worth waiting out (the store unreachable) rather than reporting. */
  transient(error: unknown): boolean;
  /** Closes the connections the backend made. */
  close(): Promise<void>;
}

/**
 * What the backends whose waiters each hold a place of their own share (etcd: a key on a lease
 * of its own; ZooKeeper: a node in a session of its own): releasing the lock and leaving the line
 * are one act, closing that place, and a waiter's `turn` watches the place just ahead.
 */
export abstract class PlacesBackend<P> {
  /** Each acquire's place, by its token. */
  protected readonly places = new Map<string, P>();

  /** Gives a place up: the store deletes its key or node, and the next in line sees it go. */
  protected abstract closePlace(place: P): Promise<void>;

  async release(_name: string, token: string): Promise<void> {
    const place = this.places.get(token);
    if (!place) return;
    this.places.delete(token);
    await this.closePlace(place);
  }

  leave(name: string, token: string): Promise<void> {
    return this.release(name, token);
  }

  transient(error: unknown): boolean {
    return error instanceof StoreUnavailableError;
  }
}
