// @ids/lock/etcd: the locks on etcd, with etcd v3's own lock semantics: each waiter puts a key
// `<prefix><name>/<lease>` bound to its lease; the key with the lowest create revision holds the
// lock, and every other waits for the key just before its own to go (FIFO, no herd). The fence
// is the holder's create revision: etcd's revision is cluster-wide, persisted and only grows.
import { InvalidArgumentError } from '@ids/engine';
import { type EtcdOptions, LeaseLostError, LeaseStoreRefusedError } from '@ids/machine-etcd';
import { Connection, parseEndpoints } from '@ids/machine-etcd/internal';
import { type LockBackend, PlacesBackend, type Taken, type TakeRequest } from './backend.js';
import { Locks } from './locks.js';
import { checkStoreMs } from './options.js';

/** Where the locks live when no prefix is given. */
export const DEFAULT_ETCD_LOCK_PREFIX = '/ids/lock/';

/**
 * How `etcdLocks` connects; every option has a default. The connection is @ids/machine-etcd's,
 * with its options (`endpoints`, `credentials`, `auth`, `etcdOptions`) documented there.
 */
export interface EtcdLocksOptions
  extends Pick<EtcdOptions, 'endpoints' | 'credentials' | 'auth' | 'etcdOptions'> {
  /** The keys' common start, ending in `/`. Default `/ids/lock/`. */
  readonly prefix?: string;
  /** The longest any exchange with etcd may take, connecting included, in ms. Default 3,000. */
  readonly timeoutMs?: number;
  /** The longest a waiter goes without re-asking (and keeping its lease alive), in ms. Default: a third of the TTL, at most 1,000. */
  readonly pollMs?: number;
}

/**
 * Opens the locks on etcd, on @ids/machine-etcd's connection, and reads the prefix once, so that
 * an etcd that is not there, or refuses these credentials, is known now.
 * @throws InvalidArgumentError for a bad option; StoreUnavailableError when etcd did not
 * answer within `timeoutMs`; LeaseStoreRefusedError when it refused (credentials, permissions, TLS).
 */
export async function etcdLocks(options: EtcdLocksOptions = {}): Promise<Locks> {
  const timeoutMs = checkStoreMs(options.timeoutMs ?? 3000, 'timeoutMs');
  const pollMs = options.pollMs === undefined ? undefined : checkStoreMs(options.pollMs, 'pollMs');
  const prefix = options.prefix ?? DEFAULT_ETCD_LOCK_PREFIX;
  if (typeof prefix !== 'string' || !prefix.endsWith('/')) {
    throw new InvalidArgumentError(`expected a string ending in "/", received ${JSON.stringify(prefix)}`, {
      option: 'prefix',
    });
  }
  const conn = new Connection(
    {
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(options.auth ? { auth: options.auth } : {}),
      ...(options.etcdOptions ? { etcdOptions: options.etcdOptions } : {}),
    },
    { hosts: parseEndpoints(options.endpoints), timeoutMs },
    'lock',
  );
  try {
    await conn.call(`reading ${prefix}`, (o) => conn.client.get(prefix).options(o).exec());
  } catch (error) {
    conn.close();
    throw error;
  }
  return new Locks(new EtcdBackend(conn, prefix, pollMs), {
    timeoutMs,
    ...(options as object),
  });
}

/** One acquire's place: its lease and the key bound to it. */
interface Place {
  readonly leaseId: string;
  readonly key: string;
  readonly revision: string;
  readonly ttlMs: number;
  /** The key just ahead in line, and the revision to watch it from. */
  ahead?: { readonly key: string; readonly revision: string };
}

class EtcdBackend extends PlacesBackend<Place> implements LockBackend {
  readonly store = 'etcd';
  readonly #conn: Connection;
  readonly #prefix: string;
  readonly #pollMs: number | undefined;

  constructor(conn: Connection, prefix: string, pollMs: number | undefined) {
    super();
    this.#conn = conn;
    this.#prefix = prefix;
    this.#pollMs = pollMs;
  }

  /**
   * Puts this acquire's key under a fresh lease (once), reading the head of the line in the same
   * transaction: an uncontended acquire is two requests (the grant, the transaction), as the etcd3
   * client's own lock. Otherwise asks which key is just ahead, to watch it.
   */
  async take(request: TakeRequest): Promise<Taken | undefined> {
    const { name, token, ttlMs, budgetMs } = request;
    const conn = this.#conn;
    const dir = `${this.#prefix}${name}/`;
    let place = this.places.get(token);
    if (place) {
      try {
        // A waiter's re-ask keeps its lease, and so its place, alive.
        await conn.keepalive(place.leaseId, budgetMs ?? conn.timeoutMs);
      } catch (error) {
        if (!(error instanceof LeaseLostError)) throw error;
        this.places.delete(token); // its key went with the lease: join again, at the back
        place = undefined;
      }
    }
    if (!place) {
      const joined = await this.#join(name, dir, token, ttlMs, budgetMs);
      place = joined.place;
      if (joined.first) return { fence: BigInt(place.revision), quarantineMs: 0 };
    }
    const revision = place.revision;
    const ahead = await conn.call(
      `reading the line for ${JSON.stringify(name)}`,
      (o) =>
        conn.client
          .getAll()
          .prefix(dir)
          .maxCreateRevision(String(BigInt(revision) - 1n))
          .sort('Create', 'Descend')
          .limit(1)
          .options(o)
          .exec(),
      budgetMs,
    );
    const first = ahead.kvs[0];
    if (first) {
      place.ahead = { key: first.key.toString(), revision: ahead.header.revision };
      return undefined;
    }
    return { fence: BigInt(revision), quarantineMs: 0 };
  }

  /** Grants the place's lease, then puts its key and reads the oldest key of `dir` in one transaction. */
  async #join(
    name: string,
    dir: string,
    token: string,
    ttlMs: number,
    budgetMs: number | undefined,
  ): Promise<{ place: Place; first: boolean }> {
    const conn = this.#conn;
    const { id: leaseId } = await conn.grant(Math.ceil(ttlMs / 1000), budgetMs);
    const key = `${dir}${BigInt(leaseId).toString(16)}`;
    let txn: Awaited<ReturnType<ReturnType<typeof conn.client.if>['commit']>>;
    try {
      txn = await conn.call(
        `joining the line for ${JSON.stringify(name)}`,
        (o) =>
          conn.client
            // The key is new with its lease, so the comparison holds; the transaction needs one.
            .if(key, 'Create', '==', 0)
            .then(
              conn.client.put(key).value(token).lease(leaseId),
              conn.client.getAll().prefix(dir).sort('Create', 'Ascend').limit(1),
            )
            .options(o)
            .commit(),
        budgetMs,
      );
    } catch (error) {
      // The put may have landed though its answer did not: revoking deletes the key with it.
      await conn.revoke(leaseId).catch(() => undefined);
      throw error;
    }
    if (!txn.succeeded) {
      await conn.revoke(leaseId).catch(() => undefined);
      throw new LeaseStoreRefusedError(
        'etcd',
        `joining the line for ${JSON.stringify(name)}: expected ${key} to be new with its lease, found it already made`,
      );
    }
    const place: Place = { leaseId, key, revision: txn.header.revision, ttlMs };
    this.places.set(token, place);
    const oldest = txn.responses[1]?.response_range?.kvs[0];
    return { place, first: oldest?.key.toString() === key };
  }

  async extend(_name: string, token: string, _ttlMs: number, timeoutMs: number): Promise<void> {
    const place = this.places.get(token);
    if (!place) throw new LeaseLostError('etcd', 'released', 'the lock was released');
    await this.#conn.keepalive(place.leaseId, timeoutMs);
  }

  /** Revokes the holder's lease: etcd deletes its key, and the next in line sees the delete. */
  protected async closePlace(place: Place): Promise<void> {
    await this.#conn.revoke(place.leaseId);
  }

  /**
   * Watches the key just ahead from the revision it was seen at: its delete is this waiter's
   * turn. Every listener added to `signal` (one signal for the whole wait) is removed before
   * this returns, so a wait of many attempts does not pile them up.
   */
  async turn(_name: string, token: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const place = this.places.get(token);
    const pollMs = this.#pollMs ?? Math.min(1000, Math.floor((place?.ttlMs ?? 3000) / 3));
    const ahead = place?.ahead;
    let cancel = () => undefined as unknown;
    let done = false;
    await new Promise<void>((resolve) => {
      const finish = () => {
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        cancel();
        resolve();
      };
      // Without a key ahead (the attempt failed: etcd unreachable), a poll only, at most 1 s.
      const timer = setTimeout(finish, ahead ? pollMs : Math.min(pollMs, 1000));
      signal.addEventListener('abort', finish, { once: true });
      if (!ahead) return;
      this.#conn.client
        .watch()
        .key(ahead.key)
        .startRevision(String(BigInt(ahead.revision) + 1n))
        .create()
        .then((watcher) => {
          cancel = () => watcher.cancel().catch(() => undefined);
          watcher.on('error', () => undefined);
          watcher.on('delete', finish);
          if (done) cancel();
        }, finish);
    });
  }

  async close(): Promise<void> {
    this.#conn.close();
  }
}
