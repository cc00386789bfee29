// @ids/lock/etcd: the locks on etcd, with etcd v3's own lock semantics: each waiter puts a key
// `<prefix><name>/<lease>` bound to its lease; the key with the lowest create revision holds the
// lock, and every other waits for the key just before its own to go (FIFO, no herd). The fence
// is the holder's create revision: etcd's revision is cluster-wide, persisted and only grows.
import { IdsError, InvalidArgumentError } from '@ids/engine';
import { LeaseLostError, LeaseStoreRefusedError, LeaseStoreUnavailableError } from '@ids/machine-etcd';
import { bounded } from '@ids/machine-lease/internal';
import { Etcd3, EtcdLeaseInvalidError, type Lease } from 'etcd3';
import { type LockBackend, PlacesBackend, type Taken } from './backend.js';
import { Locks } from './locks.js';
import { checkStoreMs } from './options.js';

/** Where the locks live when no prefix is given. */
export const DEFAULT_ETCD_LOCK_PREFIX = '/ids/lock/';

/** How `etcdLocks` connects; every option has a default. */
export interface EtcdLocksOptions {
  /** The etcd endpoints. Default `['http://127.0.0.1:2379']`. */
  readonly endpoints?: readonly string[];
  /** The keys' common start, ending in `/`. Default `/ids/lock/`. */
  readonly prefix?: string;
  /** The longest any exchange with etcd may take, in ms. Default 3,000. */
  readonly timeoutMs?: number;
  /** The longest a waiter goes without re-asking (and keeping its lease alive), in ms. Default: a third of the TTL, at most 1,000. */
  readonly pollMs?: number;
}

/** Opens the locks on etcd. */
export async function etcdLocks(options: EtcdLocksOptions = {}): Promise<Locks> {
  const timeoutMs = checkStoreMs(options.timeoutMs ?? 3000, 'timeoutMs');
  const pollMs = options.pollMs === undefined ? undefined : checkStoreMs(options.pollMs, 'pollMs');
  const prefix = options.prefix ?? DEFAULT_ETCD_LOCK_PREFIX;
  if (typeof prefix !== 'string' || !prefix.endsWith('/')) {
    throw new InvalidArgumentError(`expected a string ending in "/", received ${JSON.stringify(prefix)}`, {
      option: 'prefix',
    });
  }
  const client = new Etcd3({
    hosts: [...(options.endpoints ?? ['http://127.0.0.1:2379'])],
    dialTimeout: timeoutMs,
  });
  return new Locks(new EtcdBackend(client, prefix, timeoutMs, pollMs), {
    timeoutMs,
    ...(options as object),
  });
}

/** One acquire's place: its lease and the key bound to it. */
interface Place {
  readonly lease: Lease;
  readonly leaseId: string;
  readonly key: string;
  readonly revision: string;
  readonly ttlMs: number;
  /** The key just ahead in line, and the revision to watch it from. */
  ahead?: { readonly key: string; readonly revision: string };
}

class EtcdBackend extends PlacesBackend<Place> implements LockBackend {
  readonly store = 'etcd';
  readonly #client: Etcd3;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #pollMs: number | undefined;

  constructor(client: Etcd3, prefix: string, timeoutMs: number, pollMs: number | undefined) {
    super();
    this.#client = client;
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
    this.#pollMs = pollMs;
  }

  async #call<T>(what: string, fn: () => Promise<T>, ms = this.#timeoutMs): Promise<T> {
    try {
      return await bounded(ms, fn);
    } catch (error) {
      if (error instanceof IdsError) throw error;
      if (error instanceof EtcdLeaseInvalidError) {
        throw new LeaseLostError('etcd', 'lease-expired', `${what}: etcd no longer knows the lease`, {
          cause: error,
        });
      }
      const text = error instanceof Error ? error.message || error.name : String(error);
      throw new LeaseStoreUnavailableError('etcd', `${what}: etcd is unavailable: ${text}`, { cause: error });
    }
  }

  /**
   * Puts this acquire's key under a fresh lease (once), reading the head of the line in the same
   * transaction: an uncontended acquire is two requests (the grant, the transaction), as the etcd3
   * client's own lock. Otherwise asks which key is just ahead, to watch it.
   */
  async take(name: string, token: string, ttlMs: number, _join: boolean): Promise<Taken | undefined> {
    const dir = `${this.#prefix}${name}/`;
    let place = this.places.get(token);
    if (place) {
      try {
        // A waiter's re-ask keeps its lease, and so its place, alive.
        await this.#call('keeping a waiter alive', () => (place as Place).lease.keepaliveOnce());
      } catch (error) {
        if (!(error instanceof LeaseLostError)) throw error;
        this.places.delete(token); // its key went with the lease: join again, at the back
        place = undefined;
      }
    }
    if (!place) {
      const joined = await this.#join(name, dir, token, ttlMs);
      place = joined.place;
      if (joined.first) return { fence: BigInt(place.revision), quarantineMs: 0 };
    }
    const revision = place.revision;
    const ahead = await this.#call(`reading the line for ${JSON.stringify(name)}`, () =>
      this.#client
        .getAll()
        .prefix(dir)
        .maxCreateRevision(String(BigInt(revision) - 1n))
        .sort('Create', 'Descend')
        .limit(1)
        .exec(),
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
  ): Promise<{ place: Place; first: boolean }> {
    const lease = this.#client.lease(Math.ceil(ttlMs / 1000), { autoKeepAlive: false });
    lease.on('lost', () => undefined);
    const leaseId = await this.#call('granting a lease', () => lease.grant());
    const key = `${dir}${BigInt(leaseId).toString(16)}`;
    const txn = await this.#call(`joining the line for ${JSON.stringify(name)}`, () =>
      this.#client
        // The key is new with its lease, so the comparison holds; the transaction needs one.
        .if(key, 'Create', '==', 0)
        .then(
          this.#client.put(key).value(token).lease(leaseId),
          this.#client.getAll().prefix(dir).sort('Create', 'Ascend').limit(1),
        )
        .commit(),
    );
    if (!txn.succeeded) {
      await lease.revoke().catch(() => undefined);
      throw new LeaseStoreRefusedError(
        'etcd',
        `joining the line for ${JSON.stringify(name)}: expected ${key} to be new with its lease, found it already made`,
      );
    }
    const place: Place = { lease, leaseId, key, revision: txn.header.revision, ttlMs };
    this.places.set(token, place);
    const oldest = txn.responses[1]?.response_range?.kvs[0];
    return { place, first: oldest?.key.toString() === key };
  }

  async extend(_name: string, token: string, _ttlMs: number, timeoutMs: number): Promise<void> {
    const place = this.places.get(token);
    if (!place) throw new LeaseLostError('etcd', 'released', 'the lock was released');
    const reply = await this.#call('a lock keepalive', () => place.lease.keepaliveOnce(), timeoutMs);
    if (Number(reply.TTL) <= 0) {
      throw new LeaseLostError('etcd', 'lease-expired', `etcd says lease ${place.leaseId} no longer exists`);
    }
  }

  /** Revokes the holder's lease: etcd deletes its key, and the next in line sees the delete. */
  protected async closePlace(place: Place): Promise<void> {
    await this.#call('revoking the lock lease', () => place.lease.revoke()).catch((error) => {
      if (!(error instanceof LeaseLostError)) throw error;
    });
  }

  /** Watches the key just ahead from the revision it was seen at: its delete is this waiter's turn. */
  async turn(_name: string, token: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const place = this.places.get(token);
    const pollMs = this.#pollMs ?? Math.min(1000, Math.floor((place?.ttlMs ?? 3000) / 3));
    if (!place?.ahead) {
      // The attempt failed (etcd unreachable): ask again after a poll, not at once.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, 1000));
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return;
    }
    const { key, revision } = place.ahead;
    let done = false;
    let cancel = () => undefined as unknown;
    await new Promise<void>((resolve) => {
      const finish = () => {
        done = true;
        clearTimeout(timer);
        cancel();
        resolve();
      };
      const timer = setTimeout(finish, pollMs);
      signal.addEventListener('abort', finish, { once: true });
      this.#client
        .watch()
        .key(key)
        .startRevision(String(BigInt(revision) + 1n))
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
    this.#client.close();
  }
}
