import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { allocate, type ClaimingStore } from './allocate.js';
import type { CheckedHolderOptions, LeasedClaim } from './claim.js';
import { LeaseLostError, StoreUnavailableError } from './errors.js';
import type { Scheduler } from './keeper.js';
import { grantLease, keepLease, type Lease } from './lease.js';
import { waitBeforeIssuing } from './not-before.js';
import { isTransient, lapsed } from './recovery.js';
import { memberStore, type SharedLease, type SharedLossListener } from './shared.js';
import type { Attempt, LeaseStore, Watch } from './store.js';

const never = new Promise<never>(() => undefined);

/**
 * Holds one machine ID for one generator on any LeaseStore: a lease, the keeper that keeps it
 * alive and fences, a watch on the claim (where the store has one), and the recorded time.
 * Renewal replaces the claim object, not the holder.
 */
export class Holder {
  readonly #store: LeaseStore;
  readonly #settings: CheckedHolderOptions;
  readonly #scheduler: Scheduler;
  #lease: Lease | undefined;
  #id = -1;
  #claim: LeasedClaim | undefined;
  /** The lease the current claim was issued on: its loss aborts that claim, whatever #lease is now. */
  #claimLease: Lease | undefined;
  #controller: AbortController | undefined;
  #watch: Watch | undefined;
  /** The latest time recorded for #id (locally; written to the store in order). */
  #recorded = -1;
  #written = -1;
  #writes: Promise<void> = Promise.resolve();
  #renewal: Promise<LeasedClaim> | undefined;
  #recovering: Promise<void> = Promise.resolve();
  #released: Promise<void> | undefined;
  #wake: () => void = () => undefined;
  /** The lease this holder shares with the other claims of its process, when it does. */
  readonly #shared: SharedLease | undefined;
  /** How the shared lease tells this holder it was lost, and names it as a member. */
  readonly #member: SharedLossListener = (l, reason) => this.#onLost(l, reason);

  /**
   * A holder of nothing yet: `acquire()` claims. Alone, the holder grants its own leases on
   * `store` and closes it on release; with `shared`, it claims under that lease (whose store
   * `store` must be), and the last member to leave closes it.
   */
  constructor(store: LeaseStore, settings: CheckedHolderOptions, scheduler: Scheduler, shared?: SharedLease) {
    this.#store = store;
    this.#settings = settings;
    this.#scheduler = scheduler;
    this.#shared = shared;
    shared?.join(this.#member);
  }

  /** Grants a lease, claims an ID under it (preferring `preferred`), and issues the claim. */
  async acquire(preferred?: number): Promise<LeasedClaim> {
    if (this.#shared) return this.#acquireShared(this.#shared, preferred);
    const lease = await grantLease(this.#store, this.#settings, this.#scheduler, (l, reason) =>
      this.#onLost(l, reason),
    );
    this.#keep(lease);
    try {
      const { attempt } = await this.#allocate(this.#store, lease, preferred);
      if (!lease.keeper.check() && lapsed(lease)) {
        // The claim took longer than the trust window (a store or a process too busy to confirm
        // a keepalive meanwhile), but nobody refused it: confirm the lease now rather than fail
        // a claim that is most likely still ours.
        const confirmed = await this.#confirm(lease, attempt.notBefore);
        if (confirmed) return confirmed;
      }
      return this.#issue(lease, attempt.notBefore, attempt.revision);
    } catch (error) {
      // The lease granted here, or the one confirming it (same ID, new keeper), goes.
      for (const held of [lease, this.#lease]) held?.keeper.stop();
      if (this.#lease?.id === lease.id) this.#lease = undefined;
      await this.#store.revoke(lease.id).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Claims an ID under `lease` through `store` (the holder's, or one that keeps shared claims
   * apart) and waits out what the store asks before issuing from it.
   */
  async #allocate(
    store: ClaimingStore,
    lease: Lease,
    preferred: number | undefined,
  ): Promise<{ id: number; attempt: Extract<Attempt, { held: true }> }> {
    this.#stillValid(lease);
    const got = await allocate(store, lease.id, {
      bits: this.#settings.bits,
      probes: this.#settings.probes,
      preferred,
      ...(this.#settings.only === undefined ? {} : { only: this.#settings.only }),
      stillValid: () => this.#stillValid(lease),
    });
    const waitMs = waitBeforeIssuing(
      this.#store.name,
      got.id,
      got.attempt,
      () => this.#scheduler.wallNow?.() ?? Date.now(),
      this.#settings,
    );
    if (waitMs > 0) await this.#pause(waitMs);
    if (this.#released) throw this.#releasedError();
    if (got.id !== this.#id) {
      this.#id = got.id;
      this.#recorded = -1;
      this.#written = -1;
    }
    return got;
  }

  /**
   * `acquire` on a shared lease: the lease is the one trusted now (granted once for every
   * member), the store asked through a view that counts IDs the other members have as taken.
   * On failure the keys this attempt may have made are deleted; the lease stays for the others.
   */
  async #acquireShared(shared: SharedLease, preferred: number | undefined): Promise<LeasedClaim> {
    const lease = await shared.obtain();
    this.#lease = lease;
    const member = this.#member;
    const tried = new Set<number>();
    const store = memberStore(shared, member, this.#store, tried);
    try {
      const got = await this.#allocate(store, lease, preferred);
      if (!lease.keeper.check()) {
        // Took longer than the trust window: confirm the shared lease, then this claim.
        const confirmed = await this.#confirmShared(shared, lease, got.attempt.notBefore);
        if (confirmed) return confirmed;
      }
      return this.#issue(lease, got.attempt.notBefore, got.attempt.revision);
    } catch (error) {
      for (const made of tried) await shared.drop(member, lease.id, made).catch(() => undefined);
      throw error;
    }
  }

  /**
   * After the claim issued on `old` (a shared lease) was fenced: the shared lease confirmed (one
   * keepalive for every member, or none when another member's confirmed it and it is trusted
   * now), then this claim checked to still carry it, and issued on the lease as confirmed.
   * Undefined when the claim no longer carries it.
   * @throws LeaseLostError when the lease is gone or replaced, or trusted no longer by the time
   * the claim was checked; what the store throws when it could not be asked.
   */
  async #confirmShared(
    shared: SharedLease,
    old: Lease,
    stored: number | undefined,
  ): Promise<LeasedClaim | undefined> {
    const lease = await shared.confirm(old);
    this.#lease = lease;
    const held = await this.#store.holds(lease.id, this.#id);
    if (this.#released) throw this.#releasedError();
    if (!held) return undefined;
    return this.#issue(lease, stored, held.revision);
  }

  /** `#recoverOnce` on a shared lease: keep the ID when the lease and the claim are confirmed, else claim anew. */
  async #recoverShared(shared: SharedLease): Promise<LeasedClaim | undefined> {
    const old = this.#claimLease ?? this.#lease;
    if (old && this.#id >= 0 && shared.isBound(this.#member, old.id, this.#id)) {
      try {
        const confirmed = await this.#confirmShared(shared, old, undefined);
        if (confirmed) return confirmed;
      } catch (error) {
        if (this.#released) return undefined;
        if (!(error instanceof LeaseLostError)) throw error;
      }
      // Not ours any more, or not confirmable: let the key go (only if it still carries the lease).
      await shared.drop(this.#member, old.id, this.#id);
    }
    if (this.#released) return undefined;
    return this.#acquireShared(shared, this.#id >= 0 ? this.#id : undefined);
  }

  /**
   * One claim's key was deleted or re-bound while its lease is trusted. Alone, the lease is the
   * claim's and is fenced; shared, only this claim is: the other claims keep their keys.
   */
  #keyLost(lease: Lease, reason: LeaseLostError): void {
    if (!this.#shared) {
      lease.keeper.fence(reason);
      return;
    }
    if (this.#claimLease !== lease) return;
    void this.#cancelWatch();
    this.#controller?.abort(reason);
  }

  #releasedError(): LeaseLostError {
    return new LeaseLostError(this.#store.name, 'released', 'the claim was released while claiming');
  }

  /**
   * Records `lease` as the holder's, then starts its keeper. In that order: a keeper whose
   * deadline already passed fences inside `start()`, and its loss must find the lease recorded.
   */
  #keep(lease: Lease): void {
    this.#lease = lease;
    lease.keeper.start();
  }

  /** Throws unless the holder is live and `lease` still trusted (its deadline checked now, not only by timer). */
  #stillValid(lease: Lease): void {
    if (this.#released) throw this.#releasedError();
    if (!lease.keeper.check()) throw lease.keeper.lost;
  }

  /**
   * Hands out a claim on `lease`. Fails closed: only while the lease is trusted (a LeaseLostError
   * otherwise, which the caller treats as a lost lease), and the claim's `verify()` aborts its
   * signal whenever the keeper no longer trusts the lease, so a loss that reached no listener
   * still stops the generator before its next ID.
   */
  #issue(lease: Lease, stored: number | undefined, revision: string): LeasedClaim {
    this.#stillValid(lease);
    const id = this.#id;
    const controller = new AbortController();
    this.#controller = controller;
    this.#startWatch(lease, id, revision);
    const local = this.#recorded >= 0 ? this.#recorded : undefined;
    const notBefore = stored === undefined ? local : local === undefined ? stored : Math.max(stored, local);
    const claim: LeasedClaim = {
      machineId: id,
      signal: controller.signal,
      key: this.#store.claimKey(id),
      leaseId: lease.id,
      recordIntervalMs: this.#settings.recordIntervalMs,
      ...(notBefore === undefined ? {} : { notBefore }),
      verify: () => {
        if (!lease.keeper.check()) controller.abort(lease.keeper.lost);
      },
      trustedForMs: () =>
        controller.signal.aborted || lease.keeper.lost
          ? 0
          : Math.max(0, lease.keeper.deadline - this.#scheduler.now()),
      record: (ms) => this.#record(claim, lease, ms),
      renew: () => this.#renew(),
      release: () => this.#release(),
    };
    this.#claim = claim;
    this.#claimLease = lease;
    return claim;
  }

  /** Watches the claim from where it was seen: deleted or re-bound, it is not ours. */
  #startWatch(lease: Lease, id: number, revision: string): void {
    const key = this.#store.claimKey(id);
    this.#watch = this.#store.watch?.(lease.id, id, revision, (what) =>
      this.#keyLost(lease, new LeaseLostError(this.#store.name, 'key-lost', `the claim ${key} was ${what}`)),
    );
  }

  #onLost(lease: Lease, reason: LeaseLostError): void {
    // By object, not by lease ID: a recovered claim keeps its lease ID under a new keeper.
    if (this.#claimLease !== lease) return;
    void this.#cancelWatch();
    this.#controller?.abort(reason);
  }

  #cancelWatch(): Promise<void> {
    const watch = this.#watch;
    this.#watch = undefined;
    return watch ? watch.cancel() : Promise.resolve();
  }

  #record(claim: LeasedClaim, lease: Lease, timeMs: number): Promise<void> {
    if (!Number.isFinite(timeMs)) {
      return Promise.reject(
        new InvalidArgumentError(`record: expected Unix milliseconds, received ${received(timeMs)}`),
      );
    }
    // A fenced or replaced claim records nothing: its lease may already be someone else's ID.
    if (claim !== this.#claim || claim.signal.aborted || this.#released) return Promise.resolve();
    if (timeMs <= this.#recorded) return this.#writes;
    this.#recorded = Math.floor(timeMs);
    const write = this.#writes.then(() => this.#writeTime(lease, claim.machineId));
    this.#writes = write.catch(() => undefined);
    return write;
  }

  /** Writes the latest recorded time, only while the claim still carries our lease. */
  async #writeTime(lease: Lease, id: number): Promise<void> {
    const value = this.#recorded;
    if (value <= this.#written || lease.keeper.lost) return;
    if (!(await this.#store.writeTime(lease.id, id, value))) {
      this.#keyLost(
        lease,
        new LeaseLostError(
          this.#store.name,
          'key-lost',
          `the claim ${this.#store.claimKey(id)} no longer carries lease ${lease.id}`,
        ),
      );
      return;
    }
    this.#written = Math.max(this.#written, value);
  }

  #renew(): Promise<LeasedClaim> {
    if (this.#released) return never;
    const current = this.#claim;
    current?.verify();
    if (current && !current.signal.aborted) return Promise.resolve(current);
    if (!this.#renewal) {
      const attempt = this.#recover();
      // Release waits for this, so that a claim made meanwhile is revoked on an open connection.
      this.#recovering = attempt.then(
        () => undefined,
        () => undefined,
      );
      this.#renewal = attempt
        .then((claim) => claim ?? never)
        .finally(() => {
          this.#renewal = undefined;
        });
    }
    return this.#renewal;
  }

  /** Waits `ms` on the scheduler, or less when released. */
  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = this.#scheduler.setTimer(resolve, ms);
      this.#wake = () => {
        cancel();
        resolve();
      };
    });
  }

  /**
   * Retries, with a growing pause, until a claim is held again (resolves with it) or the
   * holder is released (resolves with undefined).
   */
  async #recover(): Promise<LeasedClaim | undefined> {
    let pause = 100;
    for (;;) {
      if (this.#released) return undefined;
      try {
        return await this.#recoverOnce();
      } catch (error) {
        if (this.#released) return undefined;
        if (!isTransient(error)) throw error;
      }
      await this.#pause(pause);
      pause = Math.min(pause * 2, 2000);
    }
  }

  /**
   * After the trust in `old` lapsed with nobody refusing it: a keepalive, then a check that the
   * claim of #id still carries the lease. Confirmed, the claim is handed out on a new keeper
   * trusted from that keepalive's sending (a recorded time `stored` from the store, if the
   * caller read one); undefined when the claim no longer carries the lease.
   * @throws LeaseLostError when the store says the lease is gone, or when the confirmation came
   * too late to trust (the keepalive and the check took longer than the trust window);
   * whatever the store throws when it could not be asked.
   */
  async #confirm(old: Lease, stored: number | undefined): Promise<LeasedClaim | undefined> {
    const sentAt = this.#scheduler.now();
    await this.#store.keepalive(old.id, this.#settings.timeoutMs);
    const held = await this.#store.holds(old.id, this.#id);
    if (this.#released) throw this.#releasedError();
    if (!held) return undefined;
    const lease = keepLease(
      this.#store,
      this.#settings,
      this.#scheduler,
      old.id,
      old.keeper.ttlMs,
      sentAt,
      (l, reason) => this.#onLost(l, reason),
    );
    this.#keep(lease);
    return this.#issue(lease, stored, held.revision);
  }

  async #recoverOnce(): Promise<LeasedClaim | undefined> {
    if (this.#shared) return this.#recoverShared(this.#shared);
    const old = this.#lease;
    if (old && lapsed(old)) {
      // The lease may have outlived our trust in it: if the store confirms it and the claim
      // still carries it, nobody else can have the ID, and we keep it.
      try {
        const confirmed = await this.#confirm(old, undefined);
        if (confirmed) return confirmed;
      } catch (error) {
        if (this.#released) return undefined;
        // Gone, or confirmed too late to trust: start over with a new lease.
        if (!(error instanceof LeaseLostError)) throw error;
      }
    }
    if (old) {
      this.#lease = undefined;
      await this.#store.revoke(old.id).catch(() => undefined);
    }
    if (this.#released) return undefined;
    return this.acquire(this.#id >= 0 ? this.#id : undefined);
  }

  /** Lets go of whatever the holder has (a claim being made included), as a claim's `release()` does. */
  release(): Promise<void> {
    return this.#release();
  }

  #release(): Promise<void> {
    this.#released ??= (async () => {
      this.#wake();
      await this.#recovering;
      const lease = this.#lease;
      this.#lease = undefined;
      // A shared lease's keeper serves the other members: the last one to leave stops it.
      if (!this.#shared) lease?.keeper.stop();
      this.#controller?.abort(new LeaseLostError(this.#store.name, 'released', 'the claim was released'));
      // Records first: their writes are guarded by the lease that is about to go.
      await this.#writes;
      await this.#cancelWatch();
      if (this.#shared) {
        await this.#shared.leave(this.#member, this.#id);
        return;
      }
      let failure: unknown;
      if (lease) {
        try {
          await this.#store.revoke(lease.id);
        } catch (error) {
          failure = error;
        }
      }
      this.#store.close();
      if (failure) {
        throw new StoreUnavailableError(
          this.#store.name,
          'machine-id',
          `releasing machine ID ${this.#id}: the lease could not be revoked (${(failure as Error).message}); ${this.#store.name} frees the ID when the lease expires, within ${this.#settings.ttlSeconds} s`,
          { cause: failure },
        );
      }
    })();
    return this.#released;
  }
}
