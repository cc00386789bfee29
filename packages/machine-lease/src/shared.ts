import type { ClaimingStore } from './allocate.js';
import { LeaseLostError, StoreUnavailableError } from './errors.js';
import type { Scheduler } from './keeper.js';
import { grantLease, keepLease, type Lease, type LeaseTiming } from './lease.js';
import type { LeaseStore } from './store.js';

/** What a claim on a shared lease hears: the lease it was issued on stopped being trusted. */
export type SharedLossListener = (lease: Lease, reason: LeaseLostError) => void;

/**
 * One lease, one store connection and one keeper for every claim of a process (issue 36: a
 * process holding 64 machine IDs paid 64 leases, 64 keepalives and, on ZooKeeper, 64 sessions).
 * Each Holder on it still owns its claim key; the lease is the shared part:
 *
 * - at most one grant and one confirming keepalive are in flight, whoever asks;
 * - the keeper's loss reaches every member, and each aborts the claim it issued on that lease
 *   object, so every claim of the process is fenced together;
 * - a member confirms the lease (one keepalive for all) and then its own claim (`holds`) before
 *   it issues again, under the same trust window as a lone holder;
 * - a member leaving deletes its own key only; the last one revokes the lease and closes the store.
 *
 * A lease that lapsed and was replaced keeps the keys of the members that have not recovered
 * yet; it is revoked once none is bound to it any more.
 */
export class SharedLease {
  readonly store: LeaseStore;
  readonly #timing: LeaseTiming;
  readonly #scheduler: Scheduler;
  readonly #members = new Set<SharedLossListener>();
  /** The lease members claim under now (trusted or not). */
  #current: Lease | undefined;
  #granting: Promise<Lease> | undefined;
  #confirming: Promise<Lease> | undefined;
  /**
   * Per lease ID, the machine IDs whose keys members bound to it and have not given up, and
   * which member each is. The store counts a key already bound to the lease as ours (a retried
   * create), so two members must never ask for the same ID under one lease: this is where
   * they are kept apart.
   */
  readonly #bound = new Map<string, Map<number, SharedLossListener>>();
  #closed = false;

  constructor(store: LeaseStore, timing: LeaseTiming, scheduler: Scheduler) {
    this.store = store;
    this.#timing = timing;
    this.#scheduler = scheduler;
  }

  /** Members joined and not yet left. */
  get members(): number {
    return this.#members.size;
  }

  /** Whether the last member left (the store is closed; a new SharedLease is needed). */
  get closed(): boolean {
    return this.#closed;
  }

  join(listener: SharedLossListener): void {
    this.#members.add(listener);
  }

  /** A lease trusted now, started: the current one, else one granted (once for every caller). */
  async obtain(): Promise<Lease> {
    for (;;) {
      const current = this.#current;
      if (current?.keeper.check()) return current;
      if (this.#granting) {
        await this.#granting;
        continue;
      }
      const granting = this.#grant();
      this.#granting = granting;
      try {
        return await granting;
      } finally {
        this.#granting = undefined;
      }
    }
  }

  async #grant(): Promise<Lease> {
    const lease = await grantLease(this.store, this.#timing, this.#scheduler, (l, reason) =>
      this.#lost(l, reason),
    );
    const old = this.#current;
    this.#current = lease;
    // Recorded before started: a keeper whose deadline passed during the grant fences in start().
    lease.keeper.start();
    if (old && old.id !== lease.id) await this.#revokeIfUnbound(old.id);
    return lease;
  }

  /**
   * After the claim issued on `old` was fenced: `old`'s lease confirmed by a keepalive sent now
   * (one for every member asking), on a new keeper trusted from its sending; or the current
   * lease at once when it is `old`'s, trusted, and already confirmed by another member.
   * @throws LeaseLostError when the lease is gone, or was replaced by another (the member then
   * claims under the current one); what the store throws when it could not be asked.
   */
  async confirm(old: Lease): Promise<Lease> {
    for (;;) {
      const current = this.#current;
      if (!current || current.id !== old.id) {
        throw new LeaseLostError(this.store.name, 'lease-expired', `lease ${old.id} was replaced`);
      }
      if (current.keeper.check()) return current;
      if (this.#confirming) {
        await this.#confirming.catch(() => undefined);
        continue;
      }
      const confirming = this.#keepalive(current);
      this.#confirming = confirming;
      try {
        return await confirming;
      } finally {
        this.#confirming = undefined;
      }
    }
  }

  async #keepalive(old: Lease): Promise<Lease> {
    let sentAt = this.#scheduler.now();
    // A store without notices (Redis) reports a lost claim through the keepalive and forgets it:
    // the lease may still carry the others, and the next keepalive says so. Each try forgets at
    // least one claim, so the tries are bounded by the members.
    for (let tries = this.#members.size; ; tries--) {
      try {
        await this.store.keepalive(old.id, this.#timing.timeoutMs);
        break;
      } catch (error) {
        if (error instanceof LeaseLostError && error.kind === 'key-lost' && tries > 0) {
          sentAt = this.#scheduler.now();
          continue;
        }
        // Gone: the next obtain() grants another.
        if (error instanceof LeaseLostError && this.#current === old) this.#current = undefined;
        throw error;
      }
    }
    if (this.#current !== old) {
      throw new LeaseLostError(this.store.name, 'lease-expired', `lease ${old.id} was replaced`);
    }
    const lease = keepLease(
      this.store,
      this.#timing,
      this.#scheduler,
      old.id,
      old.keeper.ttlMs,
      sentAt,
      (l, reason) => this.#lost(l, reason),
    );
    old.keeper.stop();
    this.#current = lease;
    lease.keeper.start();
    return lease;
  }

  #lost(lease: Lease, reason: LeaseLostError): void {
    for (const listener of [...this.#members]) listener(lease, reason);
  }

  /**
   * Before a member asks the store for `id` under `leaseId`: records the key as the member's
   * (a create whose answer is lost may still have made it). False when another member of this
   * lease has it: the member must treat the ID as taken.
   */
  bind(member: SharedLossListener, leaseId: string, id: number): boolean {
    let ids = this.#bound.get(leaseId);
    if (!ids) {
      ids = new Map();
      this.#bound.set(leaseId, ids);
    }
    const owner = ids.get(id);
    if (owner !== undefined && owner !== member) return false;
    ids.set(id, member);
    return true;
  }

  /** Whether `member` has the key of `id` bound to `leaseId`. */
  isBound(member: SharedLossListener, leaseId: string, id: number): boolean {
    return this.#bound.get(leaseId)?.get(id) === member;
  }

  /** The store said another holder has `id`: nothing of ours to delete. */
  async unbind(member: SharedLossListener, leaseId: string, id: number): Promise<void> {
    const ids = this.#bound.get(leaseId);
    if (ids?.get(id) !== member) return;
    ids.delete(id);
    await this.#revokeIfUnbound(leaseId);
  }

  /**
   * A member gives up its key of `id` under `leaseId`: deleted (only while it still carries the
   * lease; the key stays the member's until the store confirmed), and the lease revoked when it
   * is not the current one and no key is bound to it any more.
   */
  async drop(member: SharedLossListener, leaseId: string, id: number): Promise<void> {
    const ids = this.#bound.get(leaseId);
    if (ids?.get(id) !== member) return;
    await this.store.drop?.(leaseId, id);
    ids.delete(id);
    await this.#revokeIfUnbound(leaseId);
  }

  async #revokeIfUnbound(leaseId: string): Promise<void> {
    if (this.#current?.id === leaseId || (this.#bound.get(leaseId)?.size ?? 0) > 0) return;
    this.#bound.delete(leaseId);
    await this.store.revoke(leaseId).catch(() => undefined);
  }

  /**
   * A member leaves, every key it has bound given up first. The last one stops the keeper,
   * revokes every lease still bound and closes the store.
   * @throws StoreUnavailableError when its key, or the last lease, could not be let go.
   */
  async leave(member: SharedLossListener, id: number): Promise<void> {
    let failure: unknown;
    for (const [leaseId, ids] of [...this.#bound]) {
      for (const [bound, owner] of [...ids]) {
        if (owner !== member) continue;
        await this.drop(member, leaseId, bound).catch((error: unknown) => {
          failure ??= error;
          ids.delete(bound);
        });
      }
    }
    this.#members.delete(member);
    if (this.#members.size === 0 && !this.#closed) {
      this.#closed = true;
      await this.#granting?.catch(() => undefined);
      const current = this.#current;
      this.#current = undefined;
      current?.keeper.stop();
      const leases = new Set([...this.#bound.keys(), ...(current ? [current.id] : [])]);
      this.#bound.clear();
      for (const leaseId of leases) {
        await this.store.revoke(leaseId).catch((error: unknown) => {
          failure ??= error;
        });
      }
      this.store.close();
    }
    if (failure) {
      const name = this.store.name;
      throw new StoreUnavailableError(
        name,
        'machine-id',
        `releasing machine ID ${id}: its claim could not be let go (${(failure as Error).message}); ${name} frees the ID when the lease expires, within ${this.#timing.ttlSeconds} s`,
        { cause: failure },
      );
    }
  }
}

/**
 * The store as one member of `shared` claims through it: an ID another member is bound to under
 * the lease counts as taken, and a create the store refuses is unbound again. `tried` collects
 * the IDs this member asked for, for it to drop if its claim fails.
 */
export function memberStore(
  shared: SharedLease,
  member: SharedLossListener,
  inner: LeaseStore,
  tried: Set<number>,
): ClaimingStore {
  return {
    name: inner.name,
    where: inner.where,
    claimKey: (id) => inner.claimKey(id),
    listTaken: () => inner.listTaken(),
    tryCreate: async (leaseId, id, look) => {
      if (!shared.bind(member, leaseId, id)) return { held: false };
      tried.add(id);
      const attempt = await inner.tryCreate(leaseId, id, look);
      if (!attempt.held) await shared.unbind(member, leaseId, id);
      return attempt;
    },
  };
}
