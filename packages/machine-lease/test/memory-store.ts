// An in-memory LeaseStore on the fake scheduler: the holder's rules (fencing, recovery,
// allocation) tested without a server and without real time. One MemoryLeaseServer holds the
// state several holders share; each holder talks to it through its own MemoryLeaseClient, whose
// answers a test can slow down or cut off, as a congested or dead link would.
import { LeaseLostError, StoreUnavailableError } from '../src/errors.js';
import type { Attempt, Granted, LeaseStore, Watch } from '../src/store.js';
import type { FakeScheduler } from './fake-scheduler.js';

interface LeaseState {
  readonly ttlMs: number;
  /** Scheduler time at which the server forgets the lease (and every claim bound to it). */
  expiresAt: number;
}

/** The store's side: leases that expire TTL after the last keepalive reached it, and claims bound to them. */
export class MemoryLeaseServer {
  readonly scheduler: FakeScheduler;
  readonly #leases = new Map<string, LeaseState>();
  readonly #claims = new Map<number, string>();
  /** Recorded times outlive their claims, as they do in the real stores. */
  readonly #times = new Map<number, number>();
  /** Who is told when an operator deletes a claim, by machine ID. */
  readonly #watchers = new Map<number, Set<(what: string) => void>>();
  #next = 0;
  #revision = 0;
  /**
   * Set for a store that may have forgotten claims (Redis without persistence): a claim of an
   * ID with no recorded time is held, but the holder is told to wait one TTL before issuing.
   */
  forgetful = false;

  constructor(scheduler: FakeScheduler) {
    this.scheduler = scheduler;
  }

  /** Every ID with a claim now, in order. */
  claimed(): number[] {
    this.#expire();
    return [...this.#claims.keys()].sort((a, b) => a - b);
  }

  /** An operator deletes the claim of `id`: its watchers hear of it. */
  drop(id: number): void {
    this.#claims.delete(id);
    for (const lost of this.#watchers.get(id) ?? []) lost('deleted');
  }

  /** Claims of `ids` by a holder outside the test, on a lease that never expires. */
  plant(ids: readonly number[]): void {
    const lease = `foreign-${this.#next++}`;
    this.#leases.set(lease, { ttlMs: 0, expiresAt: Number.POSITIVE_INFINITY });
    for (const id of ids) this.#claims.set(id, lease);
  }

  /** The time recorded for `id`, if any. */
  recorded(id: number): number | undefined {
    return this.#times.get(id);
  }

  /** Records `timeMs` for `id` as an earlier holder did. */
  seedTime(id: number, timeMs: number): void {
    this.#times.set(id, timeMs);
  }

  watch(id: number, lost: (what: string) => void): Watch {
    const watchers = this.#watchers.get(id) ?? new Set();
    this.#watchers.set(id, watchers);
    watchers.add(lost);
    return {
      cancel: async () => {
        watchers.delete(lost);
      },
    };
  }

  /** A client with its own link to this server (timeouts, delays). */
  client(timeoutMs: number): MemoryLeaseClient {
    return new MemoryLeaseClient(this, timeoutMs);
  }

  /** The lease holding `id`'s claim now, if any. */
  owner(id: number): string | undefined {
    this.#expire();
    return this.#claims.get(id);
  }

  /** Scheduler time at which lease `leaseId` expires unless kept alive (-Infinity when gone). */
  expiresAt(leaseId: string): number {
    this.#expire();
    return this.#leases.get(leaseId)?.expiresAt ?? Number.NEGATIVE_INFINITY;
  }

  /** The server forgets everything but recorded times (a restart without persistence). */
  forget(): void {
    this.#leases.clear();
    this.#claims.clear();
  }

  /** Drops leases whose TTL ran out since the last keepalive reached the server. */
  #expire(): void {
    const now = this.scheduler.now();
    for (const [id, lease] of this.#leases) {
      if (lease.expiresAt > now) continue;
      this.#leases.delete(id);
      for (const [machine, holder] of this.#claims) if (holder === id) this.#claims.delete(machine);
    }
  }

  #live(leaseId: string): LeaseState {
    this.#expire();
    const lease = this.#leases.get(leaseId);
    if (!lease) throw new LeaseLostError('memory', 'lease-expired', `lease ${leaseId} no longer exists`);
    return lease;
  }

  grant(ttlSeconds: number): Granted {
    const id = `lease-${this.#next++}`;
    const ttlMs = ttlSeconds * 1000;
    this.#leases.set(id, { ttlMs, expiresAt: this.scheduler.now() + ttlMs });
    return { id, ttlMs };
  }

  keepalive(leaseId: string): void {
    const lease = this.#live(leaseId);
    lease.expiresAt = this.scheduler.now() + lease.ttlMs;
  }

  revoke(leaseId: string): void {
    this.#leases.delete(leaseId);
    for (const [machine, holder] of this.#claims) if (holder === leaseId) this.#claims.delete(machine);
  }

  tryCreate(leaseId: string, id: number): Attempt {
    this.#live(leaseId);
    const holder = this.#claims.get(id);
    if (holder !== undefined && holder !== leaseId) return { held: false };
    this.#claims.set(id, leaseId);
    const notBefore = this.#times.get(id);
    const revision = String(++this.#revision);
    if (notBefore === undefined && this.forgetful) {
      // As Redis does: the unknown past is closed by a record one TTL ahead, and waited out.
      const ttlMs = this.#live(leaseId).ttlMs;
      this.#times.set(id, this.scheduler.wallNow() + ttlMs);
      return { held: true, notBefore: this.#times.get(id), quarantineMs: ttlMs, revision };
    }
    return { held: true, notBefore, revision };
  }

  listTaken(): Set<number> {
    this.#expire();
    return new Set(this.#claims.keys());
  }

  writeTime(leaseId: string, id: number, timeMs: number): boolean {
    if (this.owner(id) !== leaseId) return false;
    this.#times.set(id, Math.max(this.#times.get(id) ?? -1, timeMs));
    return true;
  }

  holds(leaseId: string, id: number): { revision: string } | undefined {
    return this.owner(id) === leaseId ? { revision: String(this.#revision) } : undefined;
  }

  /** A holder gives up one claim of its lease (LeaseStore.drop). */
  unclaim(leaseId: string, id: number): void {
    if (this.owner(id) === leaseId) this.#claims.delete(id);
  }

  /** Leases alive now. */
  liveLeases(): string[] {
    this.#expire();
    return [...this.#leases.keys()];
  }

  /**
   * Deletes the claim of `id` whoever holds it, telling no watcher (an operator's hand seen
   * only by the holder's next request, as on a store without a watch); `drop` tells them.
   */
  deleteClaim(id: number): void {
    this.#claims.delete(id);
  }
}

/**
 * One holder's connection. A request reaches the server at once (the server acts at send time,
 * which is what the keeper's rule assumes at worst); its answer comes back `answerDelayMs`
 * later, or never while the link is `down`. A caller waits at most its timeout, then gets
 * StoreUnavailableError, though the server may have acted.
 */
export class MemoryLeaseClient implements LeaseStore {
  readonly name = 'memory';
  readonly where = 'memory:';
  /** How long an answer takes to come back, in ms. */
  answerDelayMs = 0;
  /** Per operation (`grant`, `keepalive`, ...): how long its answers take, over answerDelayMs. */
  readonly delays = new Map<string, number>();
  /** While true, nothing reaches the server and nothing comes back. */
  down = false;
  /** Every request sent, by operation name, in order. */
  readonly sent: string[] = [];
  /** The scheduler time each request of `sent` went out at. */
  readonly sentAt: number[] = [];
  /** Every lease granted through this client. */
  readonly granted = new Set<string>();
  readonly #server: MemoryLeaseServer;
  readonly #timeoutMs: number;

  constructor(server: MemoryLeaseServer, timeoutMs: number) {
    this.#server = server;
    this.#timeoutMs = timeoutMs;
  }

  claimKey(id: number): string {
    return `memory:${id}`;
  }

  #call<T>(op: string, act: () => T, timeoutMs = this.#timeoutMs): Promise<T> {
    const scheduler = this.#server.scheduler;
    this.sent.push(op);
    this.sentAt.push(scheduler.now());
    const timedOut = () =>
      new StoreUnavailableError('memory', 'machine-id', `${op}: no answer within ${timeoutMs} ms`);
    if (this.down) {
      return new Promise((_, reject) => scheduler.setTimer(() => reject(timedOut()), timeoutMs));
    }
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: act() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const delay = this.delays.get(op) ?? this.answerDelayMs;
    return new Promise((resolve, reject) => {
      if (delay > timeoutMs) {
        scheduler.setTimer(() => reject(timedOut()), timeoutMs);
        return;
      }
      const answer = () => (outcome.ok ? resolve(outcome.value) : reject(outcome.error));
      if (delay === 0) answer();
      else scheduler.setTimer(answer, delay);
    });
  }

  grant(ttlSeconds: number): Promise<Granted> {
    return this.#call('grant', () => {
      const granted = this.#server.grant(ttlSeconds);
      this.granted.add(granted.id);
      return granted;
    });
  }
  keepalive(leaseId: string, timeoutMs: number): Promise<void> {
    return this.#call('keepalive', () => this.#server.keepalive(leaseId), timeoutMs);
  }
  revoke(leaseId: string): Promise<void> {
    return this.#call('revoke', () => this.#server.revoke(leaseId));
  }
  tryCreate(leaseId: string, id: number): Promise<Attempt> {
    return this.#call('tryCreate', () => this.#server.tryCreate(leaseId, id));
  }
  listTaken(): Promise<Set<number>> {
    return this.#call('listTaken', () => this.#server.listTaken());
  }
  writeTime(leaseId: string, id: number, timeMs: number): Promise<boolean> {
    return this.#call('writeTime', () => this.#server.writeTime(leaseId, id, timeMs));
  }
  holds(leaseId: string, id: number): Promise<{ readonly revision: string } | undefined> {
    return this.#call('holds', () => this.#server.holds(leaseId, id));
  }
  watch(_leaseId: string, id: number, _revision: string, lost: (what: string) => void): Watch {
    return this.#server.watch(id, lost);
  }
  drop(leaseId: string, id: number): Promise<void> {
    return this.#call('drop', () => this.#server.unclaim(leaseId, id));
  }
  /** Whether the holder closed this client. */
  closed = false;
  close(): void {
    this.closed = true;
  }
}
