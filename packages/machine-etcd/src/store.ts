import { setLongTimeout } from '@ids/engine/internal';
import type { Attempt, LeaseStore } from '@ids/machine-lease';
import type { Granted, Watch } from '@ids/machine-lease/internal';
import type { Connection } from './connection.js';
import { currentOwner, Keys, parseOwner, parseTime } from './keys.js';

/** Claim keys read per request while listing (etcd answers a few hundred KB at most). */
const PAGE = 1000;

/**
 * etcd as a LeaseStore: a lease is an etcd lease, a claim is `<prefix>/<id>` bound to it (so it
 * vanishes with the lease), the recorded time is `<prefix>/time/<id>`, and a watcher on the
 * claim key tells at once when it is deleted or re-bound.
 */
export class EtcdStore implements LeaseStore {
  readonly name = 'etcd';
  readonly keys: Keys;
  readonly #conn: Connection;
  readonly #owner = JSON.stringify(currentOwner());

  constructor(conn: Connection, prefix: string) {
    this.#conn = conn;
    this.keys = new Keys(prefix);
  }

  /** The prefix with its trailing slash, as messages name it. */
  get where(): string {
    return `${this.keys.prefix}/`;
  }

  claimKey(id: number): string {
    return this.keys.claim(id);
  }

  grant(ttlSeconds: number): Promise<Granted> {
    return this.#conn.grant(ttlSeconds);
  }

  keepalive(leaseId: string, timeoutMs: number): Promise<void> {
    return this.#conn.keepalive(leaseId, timeoutMs);
  }

  revoke(leaseId: string): Promise<void> {
    return this.#conn.revoke(leaseId);
  }

  /**
   * Creates `<prefix>/<id>` bound to the lease if no key is there, in one transaction that also
   * reads the recorded time (so a claim costs one round trip). A key that already carries our
   * lease is ours: a retried request whose first try committed but whose answer was lost. When
   * the key is taken, the same transaction reads the claims of `look`, so the claimer learns
   * which are free without a write for each (a transaction that may write costs a disk sync even
   * when its compare fails); each one found is checked as a probe's would be, garbage refused.
   *
   * @throws LeaseCorruptClaimError when the key, or the recorded time of an ID we get, holds garbage.
   */
  async tryCreate(leaseId: string, id: number, look: readonly number[] = []): Promise<Attempt> {
    const client = this.#conn.client;
    const key = this.keys.claim(id);
    const timeKey = this.keys.time(id);
    const reply = await this.#conn.call(`claiming ${key}`, (options) =>
      client
        .if(key, 'Create', '==', 0)
        .then(client.put(key).value(this.#owner).lease(leaseId), client.get(timeKey))
        .else(client.get(key), client.get(timeKey), ...look.map((other) => this.#read(other)))
        .options(options)
        .commit(),
    );
    const existing = reply.succeeded ? undefined : reply.responses[0]?.response_range.kvs[0];
    if (existing && existing.lease !== leaseId) {
      // Read it only to refuse garbage: a valid holder's identity is not otherwise needed here.
      parseOwner(key, existing.value);
      const free = look.filter((other, i) => {
        const kv = reply.responses[2 + i]?.response_range.kvs[0];
        if (kv) parseOwner(this.keys.claim(other), kv.value);
        return !kv || kv.lease === leaseId;
      });
      return { held: false, free };
    }
    const time = reply.responses[1]?.response_range.kvs[0];
    return {
      held: true,
      notBefore: time ? parseTime(timeKey, time.value) : undefined,
      revision: reply.header.revision,
    };
  }

  /** A read of the claim of `id`, as a transaction's operation (the builder's `get` runs alone). */
  #read(id: number) {
    return { request_range: { key: Buffer.from(this.keys.claim(id)) } };
  }

  /**
   * Every ID held under the prefix, read page by page, keys only: which IDs are taken is all a
   * listing is for, and near a full field many claimers list at once. A value holding garbage
   * is reported by whichever probe or check reads it; a key name that is not `<prefix>/<id>`
   * is reported here (LeaseCorruptClaimError).
   */
  async listTaken(): Promise<Set<number>> {
    const { keys } = this;
    const taken = new Set<number>();
    let start = keys.claims.start;
    for (;;) {
      const from = start;
      const page = await this.#conn.call(`listing the claims under ${keys.prefix}/`, (options) =>
        this.#conn.client.kv.range(
          { key: Buffer.from(from), range_end: Buffer.from(keys.claims.end), limit: PAGE, keys_only: true },
          options,
        ),
      );
      for (const kv of page.kvs) taken.add(keys.idOf(kv.key.toString('utf8')));
      const last = page.kvs.at(-1);
      if (!page.more || !last) return taken;
      start = `${last.key.toString('utf8')}\0`;
    }
  }

  async writeTime(leaseId: string, id: number, timeMs: number): Promise<boolean> {
    const client = this.#conn.client;
    const key = this.keys.claim(id);
    const reply = await this.#conn.call(`recording the time of ${key}`, (options) =>
      client
        .if(key, 'Lease', '==', leaseId)
        .then(client.put(this.keys.time(id)).value(String(timeMs)))
        .options(options)
        .commit(),
    );
    return reply.succeeded;
  }

  async holds(leaseId: string, id: number): Promise<{ revision: string } | undefined> {
    const key = this.keys.claim(id);
    const reply = await this.#conn.call(`reading ${key}`, (options) =>
      this.#conn.client.get(key).options(options).exec(),
    );
    return reply.kvs[0]?.lease === leaseId ? { revision: reply.header.revision } : undefined;
  }

  /** Deletes `<prefix>/<id>` only while it carries the lease: one claim of a shared lease leaving. */
  async drop(leaseId: string, id: number): Promise<void> {
    const client = this.#conn.client;
    const key = this.keys.claim(id);
    await this.#conn.call(`releasing ${key}`, (options) =>
      client.if(key, 'Lease', '==', leaseId).then(client.delete().key(key)).options(options).commit(),
    );
  }

  /** Watches the claim key from the revision after `revision`: deleted or re-bound, it is not ours. */
  watch(leaseId: string, id: number, revision: string, lost: (what: string) => void): Watch {
    const watcher = this.#conn.client
      .watch()
      .key(this.keys.claim(id))
      .startRevision(String(BigInt(revision) + 1n))
      .watcher();
    // The watcher reconnects by itself; whether etcd is reachable is the keeper's business.
    watcher.on('error', () => undefined);
    watcher.on('delete', () => lost('deleted'));
    watcher.on('put', (kv) => {
      if (kv.lease !== leaseId) lost(`overwritten under lease ${kv.lease}`);
    });
    return {
      // cancel() waits for etcd's confirmation when connected; do not wait past the timeout.
      // A real timer, like every other bound on a request: the scheduler is for lease timing.
      cancel: () =>
        new Promise<void>((resolve) => {
          const cancelTimer = setLongTimeout(resolve, this.#conn.timeoutMs, { unref: true });
          watcher
            .cancel()
            .catch(() => undefined)
            .then(() => {
              cancelTimer();
              resolve();
            });
        }),
    };
  }

  close(): void {
    this.#conn.close();
  }
}
