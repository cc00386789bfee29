import type { Attempt, LeaseStore } from '@ids/machine-lease';
import { LeaseCorruptClaimError, LeaseLostError, LeaseStoreRefusedError } from '@ids/machine-lease/errors';
import { currentOwner, type Granted, type Watch } from '@ids/machine-lease/internal';
import { STORE, ZkAnswer, ZkSession } from './client.js';
import type { ConnectString } from './connect-string.js';
import { Paths, parseOwner, parseTime } from './paths.js';

const answered = (error: unknown, ...answers: string[]) =>
  error instanceof ZkAnswer && answers.includes(error.answer);

/**
 * ZooKeeper as a LeaseStore. A lease is a session: `grant` opens one, `revoke` closes it, and
 * each claim is an ephemeral node of it, so the server deletes the claims when the session
 * ends or expires. The session's ID is the lease's.
 *
 * The keepalive is a write (a transaction holding one version check), not a read: a write is
 * ordered through the leader, which refuses it once it has expired the session, whereas a read
 * can be answered by a follower cut off from the leader that has not noticed yet. A request
 * sent at `t` touches the session on the server after `t`, so the session lives until at least
 * `t` plus its timeout (the rule LeaseStore asks for). A follower reports that touch to the
 * leader within half a tick: `fenceMarginMs` must exceed the server's tickTime (the default
 * margin, a fifth of the timeout, does for any timeout of 5 ticks or more).
 */
export class ZookeeperStore implements LeaseStore {
  readonly name = STORE;
  readonly paths: Paths;
  readonly #connect: ConnectString;
  readonly #timeoutMs: number;
  readonly #sessions = new Map<string, ZkSession>();
  #laidOut = false;

  /** Times no ID may be issued at or before, by ID, from outside this store (a Leaf worker's last report). */
  readonly #floors: ReadonlyMap<number, number>;
  /** The holder's fencing margin: a granted session timeout at or under it could never be trusted. */
  readonly #marginMs: number;

  constructor(
    connect: ConnectString,
    base: string,
    timing: { readonly timeoutMs: number; readonly marginMs: number },
    floors: ReadonlyMap<number, number> = new Map(),
  ) {
    this.#connect = connect;
    this.#floors = floors;
    this.#marginMs = timing.marginMs;
    this.paths = new Paths(base);
    this.#timeoutMs = timing.timeoutMs;
  }

  get where(): string {
    return `${this.paths.claims}/`;
  }

  claimKey(id: number): string {
    return this.paths.claim(id);
  }

  /**
   * Opens a session with `ttlSeconds` as its timeout; the lease is its ID and granted timeout.
   * The server may grant less (its maxSessionTimeout): a grant not above the fencing margin
   * would fence every claim the moment it is made, and is LeaseStoreRefusedError: the server's
   * setting refuses the lease asked, so retrying cannot help (the options alone were valid).
   */
  async grant(ttlSeconds: number): Promise<Granted> {
    const session = await ZkSession.open(this.#connect, {
      sessionTimeoutMs: ttlSeconds * 1000,
      timeoutMs: this.#timeoutMs,
      feature: 'machine-id',
    });
    if (session.timeoutMs <= this.#marginMs) {
      await session.close();
      throw new LeaseStoreRefusedError(
        STORE,
        `the server granted a session timeout of ${session.timeoutMs} ms for the ${ttlSeconds * 1000} ms asked (its maxSessionTimeout), not above fenceMarginMs (${this.#marginMs} ms): a claim would never be trusted; lower ttlSeconds or fenceMarginMs, or raise the server's maxSessionTimeout`,
      );
    }
    try {
      if (!this.#laidOut) {
        // Looked up first: mkdirp tries a create for every segment, a write each, even when
        // the path is there (the common case, paid by every claimer of a fleet). Both lookups
        // go out together: one round trip, not two.
        const paths = [this.paths.claims, this.paths.times];
        const found = await Promise.all(paths.map((path) => session.exists(path)));
        for (const [i, path] of paths.entries()) if (found[i] === undefined) await session.mkdirp(path);
        this.#laidOut = true;
      }
    } catch (error) {
      await session.close();
      throw error;
    }
    this.#sessions.set(session.id, session);
    return { id: session.id, ttlMs: session.timeoutMs };
  }

  #session(leaseId: string): ZkSession {
    const session = this.#sessions.get(leaseId);
    if (!session || session.ended !== undefined) {
      throw new LeaseLostError(
        STORE,
        'lease-expired',
        `the ZooKeeper session 0x${leaseId} has ${session?.ended ?? 'been closed'}`,
      );
    }
    return session;
  }

  /**
   * A transaction of one version check on the claims directory: the cheapest request that still
   * proves the session alive at the leader. The leader's session tracker checks every request
   * it orders and refuses one of a session it has expired, and a follower must forward a
   * transaction to the leader, so a confirmed check means the leader knew the session alive
   * after it was sent. A read (`exists`, `getData`) is answered by whichever server the client
   * is on, from its own copy, even cut off from the leader: on a single server the fleet
   * simulator (`npm run bench -- fleet`) measured reads at about twice the rate of this check,
   * and this check at the rate of a `setData` (it is logged like any write), but a read proves
   * nothing to the leader. The server's ping and `sync` skip the log, but the client here sends
   * neither as a request that can fail with the session. So a keepalive costs one write: an
   * ensemble carries (its write rate) x TTL / 3.75 idle holders (README, "Fleet capacity").
   */
  async keepalive(leaseId: string): Promise<void> {
    await this.#session(leaseId).multi([{ op: 'check', path: this.paths.claims, version: -1 }]);
  }

  /** Closes the session: the server deletes its claims at once. */
  async revoke(leaseId: string): Promise<void> {
    const session = this.#sessions.get(leaseId);
    this.#sessions.delete(leaseId);
    await session?.close();
  }

  /**
   * Deletes the claim of `id` if it is an ephemeral node of this session: one claim of a shared
   * session leaving. The version guards the delete against a node re-created meanwhile by
   * another holder (only after an operator deleted ours: the session is alive, the delete goes
   * through it); another holder's claim deleted by mistake is fenced by its own watch.
   */
  async drop(leaseId: string, id: number): Promise<void> {
    const session = this.#sessions.get(leaseId);
    if (!session || session.ended !== undefined) return;
    const path = this.paths.claim(id);
    const stat = await session.exists(path);
    if (stat?.owner !== session.id) return;
    try {
      await session.remove(path, stat.version);
    } catch (error) {
      if (!answered(error, 'NO_NODE', 'BAD_VERSION')) throw error;
    }
  }

  /**
   * Creates the ephemeral claim, then reads the recorded time. The read comes after the create
   * on the same session, so it sees every write ordered before the create, among them the
   * last time the previous holder recorded while its claim still stood.
   *
   * @throws LeaseCorruptClaimError when the claim or its time holds something this package
   * did not write (nothing is written then; a claim just made goes with the session).
   */
  async tryCreate(leaseId: string, id: number): Promise<Attempt> {
    const session = this.#session(leaseId);
    const path = this.paths.claim(id);
    try {
      await session.create(path, JSON.stringify(currentOwner()), 'ephemeral');
    } catch (error) {
      if (!answered(error, 'NODE_EXISTS')) throw error;
      const found = await session.getData(path);
      if (!found) return { held: false };
      if (found.stat.owner === undefined) {
        throw new LeaseCorruptClaimError(
          STORE,
          path,
          `the claim ${path} is a persistent node: claims are ephemeral nodes of their holder's session; remove it or use another path`,
        );
      }
      parseOwner(path, found.data);
      // Ours: the create was retried after its answer was lost.
      if (found.stat.owner !== session.id) return { held: false };
    }
    // Both reads go out together, after the create on the same session (which orders them
    // behind it): one round trip, not two.
    const [time, claim] = await Promise.all([session.getData(this.paths.time(id)), session.exists(path)]);
    if (!claim || claim.owner !== session.id) {
      throw new LeaseLostError(STORE, 'key-lost', `the claim ${path} was deleted while it was being made`);
    }
    const recorded = time === undefined ? undefined : parseTime(this.paths.time(id), time.data);
    const floor = this.#floors.get(id);
    const notBefore =
      recorded === undefined ? floor : floor === undefined ? recorded : Math.max(recorded, floor);
    return { held: true, notBefore, revision: claim.czxid };
  }

  async listTaken(): Promise<Set<number>> {
    const session = [...this.#sessions.values()].find((s) => s.ended === undefined);
    if (!session)
      throw new LeaseLostError(STORE, 'lease-expired', 'no live ZooKeeper session to list the claims with');
    const children = (await session.getChildren(this.paths.claims)) ?? [];
    return new Set(children.map((child) => this.paths.idOf(child)));
  }

  /**
   * Raises the recorded time to `timeMs` in one transaction with a check that the claim is
   * still the one this session made (its version unchanged; the transaction runs on the
   * session, which the server refuses once expired). Another writer in between means a retry.
   */
  async writeTime(leaseId: string, id: number, timeMs: number): Promise<boolean> {
    const session = this.#sessions.get(leaseId);
    if (!session || session.ended !== undefined) return false;
    const path = this.paths.claim(id);
    const timePath = this.paths.time(id);
    for (;;) {
      const claim = await session.exists(path);
      if (!claim || claim.owner !== session.id) return false;
      const time = await session.getData(timePath);
      if (time !== undefined && parseTime(timePath, time.data) >= timeMs) return true;
      try {
        await session.multi([
          { op: 'check', path, version: claim.version },
          time === undefined
            ? { op: 'create', path: timePath, data: String(timeMs) }
            : { op: 'set', path: timePath, data: String(timeMs), version: time.stat.version },
        ]);
        return true;
      } catch (error) {
        if (error instanceof LeaseLostError) return false;
        if (!answered(error, 'BAD_VERSION', 'NODE_EXISTS', 'NO_NODE')) throw error;
      }
    }
  }

  async holds(leaseId: string, id: number): Promise<{ revision: string } | undefined> {
    const session = this.#sessions.get(leaseId);
    if (!session || session.ended !== undefined) return undefined;
    const claim = await session.exists(this.paths.claim(id));
    return claim && claim.owner === session.id ? { revision: claim.czxid } : undefined;
  }

  /**
   * Reports the claim lost when its node is deleted or re-created, or its session expires.
   * ZooKeeper's watches fire once: each other event re-arms it.
   */
  watch(leaseId: string, id: number, revision: string, lost: (what: string) => void): Watch {
    const session = this.#sessions.get(leaseId);
    if (!session) {
      lost('gone with its session');
      return { cancel: async () => undefined };
    }
    let active = true;
    const report = (what: string) => {
      if (!active) return;
      active = false;
      lost(what);
    };
    const stopEnd = session.onEnd((why) => {
      if (why === 'expired') report('lost with its expired session');
    });
    const path = this.paths.claim(id);
    const arm = (): void => {
      session
        .exists(path, (event) => {
          if (!active) return;
          if (event === 'deleted') report('deleted');
          else arm();
        })
        .then((stat) => {
          if (!stat) report('deleted');
          else if (stat.czxid !== revision || stat.owner !== leaseId) report('re-created by another holder');
        })
        // A failed read is the keepalive's to report (it fences by the deadline).
        .catch(() => undefined);
    };
    arm();
    return {
      cancel: async () => {
        active = false;
        stopEnd();
      },
    };
  }

  close(): void {
    for (const session of this.#sessions.values()) void session.close();
    this.#sessions.clear();
  }
}
