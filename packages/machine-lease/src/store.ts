/** Why a held machine ID stopped being trusted (the `kind` of a LeaseLostError). */
export type LeaseLossKind =
  /** A keepalive was refused or could not reach the store. */
  | 'keepalive-failed'
  /** No keepalive succeeded for TTL minus the fencing margin. */
  | 'deadline'
  /** The store says the lease no longer exists (it expired or was revoked). */
  | 'lease-expired'
  /** The claim key was deleted or given to another holder. */
  | 'key-lost'
  /** The claim was released by its holder. */
  | 'released';

/** A lease as granted: its ID in the store and its TTL. */
export interface Granted {
  /** The store's name for the lease (etcd: a decimal int64; Redis: a random token). */
  readonly id: string;
  /** The TTL the store granted, in ms. */
  readonly ttlMs: number;
}

/** What one create-if-absent attempt found. */
export type Attempt =
  | {
      /** The claim was created (or was already ours). */
      readonly held: true;
      /** The time recorded for this ID by an earlier holder, if any (Unix ms). */
      readonly notBefore: number | undefined;
      /**
       * Set by a store that can forget claims (Redis without persistence): how long, in ms from
       * now, the holder must hold the claim without issuing from it, because an earlier holder
       * the store forgot may still be issuing until then (its own fence ends it within a TTL).
       * Not for a recorded time ahead of the clock: the holder waits for `notBefore` itself.
       */
      readonly quarantineMs?: number;
      /** Where a watch of the claim starts so that it misses nothing (etcd: a revision). */
      readonly revision: string;
    }
  | {
      /** Another holder has the ID. */
      readonly held: false;
      /**
       * Of the IDs the attempt was asked to `look` at, those with no claim when it looked. Left
       * out by a store that cannot look in the same request.
       */
      readonly free?: readonly number[];
    };

/**
 * A key-value store that can hold machine-ID claims under leases: the seven operations the
 * holder needs, and nothing else. A store owns its connection, key layout and identity value;
 * the holder owns timing, allocation order, fencing and renewal.
 *
 * The rule every implementation must keep: once `grant`, or a `keepalive` sent at time `t`,
 * resolves, every claim bound to the lease lives in the store until at least `t + TTL`. The
 * holder's fencing deadline rests on it.
 */
export interface LeaseStore {
  /**
   * The store's name, lower case: `etcd`, `redis`. The holder's errors carry it in `store` and
   * start their message with it; the store's own errors (StoreUnavailableError, ...) do too.
   */
  readonly name: string;
  /** Where the claims live, for messages: `/ids/machine-id/`, `ids:machine-id:`. */
  readonly where: string;
  /** The name of the claim of `id` (the claim's `key`). */
  claimKey(id: number): string;
  /** Grants a lease of `ttlSeconds`. */
  grant(ttlSeconds: number): Promise<Granted>;
  /**
   * One keepalive, within `timeoutMs`: resolves once the store confirms the lease (and every
   * claim bound to it) alive; rejects with a LeaseLostError when the store says it is gone,
   * with anything else (StoreUnavailableError) when it could not ask.
   */
  keepalive(leaseId: string, timeoutMs: number): Promise<void>;
  /** Ends the lease, freeing its claims at once. A lease already gone is not an error. */
  revoke(leaseId: string): Promise<void>;
  /**
   * Creates the claim of `id`, bound to the lease, if nothing is there, reading the recorded
   * time in the same step. A claim already bound to this lease is ours (a retried request).
   * Rejects with LeaseCorruptClaimError when the key holds something this store did not write.
   *
   * `look`: other IDs the claimer would try next. A store whose failed create is as costly as a
   * successful one (etcd: every transaction that may write is agreed and synced to disk, even
   * when its compare fails) reads them in the same request and answers which were `free`, so
   * that the claimer writes only where it may succeed. A hint, never a promise: another claimer
   * may take one the moment after. A store for which a failed create is cheap ignores it.
   */
  tryCreate(leaseId: string, id: number, look?: readonly number[]): Promise<Attempt>;
  /** Every ID with a claim, keys only. Rejects (LeaseCorruptClaimError) for a claim name that is not an ID. */
  listTaken(): Promise<Set<number>>;
  /**
   * Records `timeMs` for `id` (kept only if later), only while the claim carries the lease.
   * Resolves false when it no longer does.
   */
  writeTime(leaseId: string, id: number, timeMs: number): Promise<boolean>;
  /** After a keepalive confirmed the lease: whether `id`'s claim still carries it (and from where to watch). */
  holds(leaseId: string, id: number): Promise<{ readonly revision: string } | undefined>;
  /**
   * Optional: calls `lost` as soon as the claim is deleted or re-bound. A store without
   * notifications leaves it out; its keepalive must then check the claim itself.
   */
  watch?(leaseId: string, id: number, revision: string, lost: (what: string) => void): Watch;
  /**
   * Optional: deletes the claim of `id` only while it still carries the lease, leaving the lease
   * and its other claims alive. A store with it can carry several claims of one process on one
   * lease (`shareLease`); one claim leaving deletes its key, the last one revokes.
   */
  drop?(leaseId: string, id: number): Promise<void>;
  /** Closes the connection if the store made it. */
  close(): void;
}

/** A running watch. */
export interface Watch {
  /** Stops it; resolves within the store's timeout at most. */
  cancel(): Promise<void>;
}
