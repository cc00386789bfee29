import type { MachineIdClaim, MachineIdContext } from '@ids/engine';
import { DEFAULT_RECORD_INTERVAL_MS } from '@ids/engine';
import { received } from '@ids/engine/internal';
import type { Watcher } from 'etcd3';
import { allocate, type ClaimContext } from './allocate.js';
import { Connection } from './connection.js';
import {
  EtcdLeaseLostError,
  EtcdOptionError,
  EtcdUnavailableError,
  MachineBitsMismatchError,
  MachineIdSpaceFullError,
} from './errors.js';
import { LeaseKeeper, realScheduler, type Scheduler } from './keeper.js';
import { currentOwner, Keys } from './keys.js';
import { DEFAULT_PROBES, type EtcdOptions, type Settings, settings as validate } from './options.js';

/** The options of `etcdMachineId`: how to reach etcd (EtcdOptions), and how to pick and record an ID. */
export interface EtcdMachineIdOptions extends EtcdOptions {
  /**
   * Random IDs tried before listing the taken ones, 0 to 64, else EtcdOptionError. Default 3:
   * in a sparse field a random ID is almost always free, and one request beats a listing.
   */
  readonly probes?: number;
  /**
   * How often, in ms, the generator records the time it reached on the claim (one etcd write
   * each time the tick moved). Default 1,000; above 0, else EtcdOptionError.
   */
  readonly recordIntervalMs?: number;
}

/** A machine ID held through an etcd lease; the generator watches it (see MachineIdClaim). */
export interface EtcdMachineIdClaim extends MachineIdClaim {
  /** Aborts, with an EtcdLeaseLostError as reason, when the lease can no longer be trusted, or on release. */
  readonly signal: AbortSignal;
  /** The claim key, `<prefix>/<id>`. */
  readonly key: string;
  /** The etcd lease holding the key (decimal). */
  readonly leaseId: string;
  /** Fences at once if the lease's trust deadline has passed (timers may not have run yet). */
  verify(): void;
  /** Writes the time reached (kept only if later than any before) to `<prefix>/time/<id>`. */
  record(timeMs: number): Promise<void>;
  /**
   * Once the signal aborted: resolves with a claim again, retrying while etcd is unavailable.
   * It keeps the same ID when the lease survived, else claims one (the same ID if still free).
   * Rejects on what retrying cannot fix (garbage under the prefix, a bits mismatch, refused
   * credentials). After release it never settles.
   */
  renew(): Promise<EtcdMachineIdClaim>;
  /**
   * Waits for pending records, cancels the watcher, stops keepalives, revokes the lease (the
   * key is gone at once) and closes the client if it was made here. Idempotent.
   * @throws EtcdUnavailableError when the lease could not be revoked (etcd frees the ID when
   * the lease expires, within the TTL); everything else is released regardless.
   */
  release(): Promise<void>;
}

/** What etcdMachineId returns: a MachineIdProvider whose result is always an EtcdMachineIdClaim. */
export type EtcdMachineIdProvider = (context: MachineIdContext) => Promise<EtcdMachineIdClaim>;

/** Undocumented test seam: where the keeper reads time and sets timers. */
interface Internal {
  readonly scheduler?: Scheduler;
}

interface Lease {
  readonly id: string;
  readonly keeper: LeaseKeeper;
}

const never = new Promise<never>(() => undefined);

function transient(error: unknown): boolean {
  return (
    error instanceof EtcdUnavailableError ||
    error instanceof EtcdLeaseLostError ||
    error instanceof MachineIdSpaceFullError
  );
}

/**
 * Holds one machine ID for one generator: a lease, the keeper that keeps it alive and fences,
 * a watcher on the claim key, and the recorded time. Renewal replaces the claim object, not
 * the holder.
 */
class Holder {
  readonly #conn: Connection;
  readonly #settings: Settings;
  readonly #keys: Keys;
  readonly #owner = JSON.stringify(currentOwner());
  readonly #scheduler: Scheduler;
  readonly #probes: number;
  readonly #recordIntervalMs: number;
  readonly #bits: number;
  #lease: Lease | undefined;
  #id = -1;
  #claim: EtcdMachineIdClaim | undefined;
  #controller: AbortController | undefined;
  #watcher: Watcher | undefined;
  /** The latest time recorded for #id (locally; written to etcd in order). */
  #recorded = -1;
  #written = -1;
  #writes: Promise<void> = Promise.resolve();
  #renewal: Promise<EtcdMachineIdClaim> | undefined;
  #recovering: Promise<void> = Promise.resolve();
  #released: Promise<void> | undefined;
  #wake: () => void = () => undefined;

  constructor(
    conn: Connection,
    s: Settings,
    probes: number,
    recordIntervalMs: number,
    bits: number,
    scheduler: Scheduler,
  ) {
    this.#conn = conn;
    this.#settings = s;
    this.#keys = new Keys(s.prefix);
    this.#probes = probes;
    this.#recordIntervalMs = recordIntervalMs;
    this.#bits = bits;
    this.#scheduler = scheduler;
  }

  /** Grants a lease, claims an ID under it (preferring `preferred`), and issues the claim. */
  async acquire(preferred?: number): Promise<EtcdMachineIdClaim> {
    const sentAt = this.#scheduler.now();
    const granted = await this.#conn.grant(this.#settings.ttlSeconds);
    if (this.#released) {
      await this.#conn.revoke(granted.id).catch(() => undefined);
      throw new EtcdLeaseLostError('released', 'the claim was released while claiming');
    }
    const lease = this.#startLease(
      granted.id,
      Math.min(granted.ttlMs, this.#settings.ttlSeconds * 1000),
      sentAt,
    );
    try {
      const ctx: ClaimContext = { conn: this.#conn, keys: this.#keys, owner: this.#owner, leaseId: lease.id };
      const { id, attempt } = await allocate(ctx, {
        bits: this.#bits,
        probes: this.#probes,
        preferred,
        stillValid: () => this.#stillValid(lease),
      });
      this.#stillValid(lease);
      if (id !== this.#id) {
        this.#id = id;
        this.#recorded = -1;
        this.#written = -1;
      }
      return this.#issue(lease, attempt.notBefore, attempt.revision);
    } catch (error) {
      lease.keeper.stop();
      if (this.#lease === lease) this.#lease = undefined;
      await this.#conn.revoke(lease.id).catch(() => undefined);
      throw error;
    }
  }

  #startLease(id: string, ttlMs: number, sentAt: number): Lease {
    const { marginMs, intervalMs, timeoutMs } = this.#settings;
    const lease: Lease = {
      id,
      keeper: new LeaseKeeper(
        { ttlMs, marginMs, intervalMs, timeoutMs },
        this.#scheduler,
        (ms) => this.#conn.keepalive(id, ms),
        (reason) => this.#onLost(lease, reason),
        sentAt,
      ),
    };
    this.#lease = lease;
    lease.keeper.start();
    return lease;
  }

  #stillValid(lease: Lease): void {
    if (this.#released) throw new EtcdLeaseLostError('released', 'the claim was released while claiming');
    if (lease.keeper.lost) throw lease.keeper.lost;
  }

  #issue(lease: Lease, stored: number | undefined, revision: string): EtcdMachineIdClaim {
    const id = this.#id;
    const controller = new AbortController();
    this.#controller = controller;
    this.#watch(lease, id, revision);
    const local = this.#recorded >= 0 ? this.#recorded : undefined;
    const notBefore = stored === undefined ? local : local === undefined ? stored : Math.max(stored, local);
    const claim: EtcdMachineIdClaim = {
      machineId: id,
      signal: controller.signal,
      key: this.#keys.claim(id),
      leaseId: lease.id,
      recordIntervalMs: this.#recordIntervalMs,
      ...(notBefore === undefined ? {} : { notBefore }),
      verify: () => void lease.keeper.check(),
      record: (ms) => this.#record(claim, lease, ms),
      renew: () => this.#renew(),
      release: () => this.#release(),
    };
    this.#claim = claim;
    return claim;
  }

  /** Watches the claim key from the revision it was seen at: deleted or re-bound, it is not ours. */
  #watch(lease: Lease, id: number, revision: string): void {
    const watcher = this.#conn.client
      .watch()
      .key(this.#keys.claim(id))
      .startRevision(String(BigInt(revision) + 1n))
      .watcher();
    // The watcher reconnects by itself; whether etcd is reachable is the keeper's business.
    watcher.on('error', () => undefined);
    const lost = (what: string) =>
      lease.keeper.fence(new EtcdLeaseLostError('key-lost', `the claim ${this.#keys.claim(id)} was ${what}`));
    watcher.on('delete', () => lost('deleted'));
    watcher.on('put', (kv) => {
      if (kv.lease !== lease.id) lost(`overwritten under lease ${kv.lease}`);
    });
    this.#watcher = watcher;
  }

  #onLost(lease: Lease, reason: EtcdLeaseLostError): void {
    if (this.#lease !== lease) return;
    this.#cancelWatcher();
    const controller = this.#controller;
    if (controller && this.#claim?.leaseId === lease.id) controller.abort(reason);
  }

  #cancelWatcher(): Promise<void> {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    if (!watcher) return Promise.resolve();
    // cancel() waits for etcd's confirmation when connected; do not wait past the timeout.
    return new Promise<void>((resolve) => {
      const cancel = this.#scheduler.setTimer(resolve, this.#settings.timeoutMs);
      watcher
        .cancel()
        .catch(() => undefined)
        .then(() => {
          cancel();
          resolve();
        });
    });
  }

  #record(claim: EtcdMachineIdClaim, lease: Lease, timeMs: number): Promise<void> {
    if (!Number.isFinite(timeMs)) {
      return Promise.reject(
        new EtcdOptionError('record', `expected Unix milliseconds, received ${received(timeMs)}`),
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

  /** Writes the latest recorded time, only while the claim key still carries our lease. */
  async #writeTime(lease: Lease, id: number): Promise<void> {
    const value = this.#recorded;
    if (value <= this.#written || lease.keeper.lost) return;
    const client = this.#conn.client;
    const key = this.#keys.claim(id);
    const reply = await this.#conn.call(`recording the time of ${key}`, (options) =>
      client
        .if(key, 'Lease', '==', lease.id)
        .then(client.put(this.#keys.time(id)).value(String(value)))
        .options(options)
        .commit(),
    );
    if (!reply.succeeded) {
      lease.keeper.fence(
        new EtcdLeaseLostError('key-lost', `the claim ${key} no longer carries lease ${lease.id}`),
      );
      return;
    }
    this.#written = Math.max(this.#written, value);
  }

  #renew(): Promise<EtcdMachineIdClaim> {
    if (this.#released) return never;
    const current = this.#claim;
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

  /**
   * Retries, with a growing pause, until a claim is held again (resolves with it) or the
   * holder is released (resolves with undefined).
   */
  async #recover(): Promise<EtcdMachineIdClaim | undefined> {
    let pause = 100;
    for (;;) {
      if (this.#released) return undefined;
      try {
        return await this.#recoverOnce();
      } catch (error) {
        if (this.#released) return undefined;
        if (!transient(error)) throw error;
      }
      await new Promise<void>((resolve) => {
        const cancel = this.#scheduler.setTimer(resolve, pause);
        this.#wake = () => {
          cancel();
          resolve();
        };
      });
      pause = Math.min(pause * 2, 2000);
    }
  }

  async #recoverOnce(): Promise<EtcdMachineIdClaim | undefined> {
    const old = this.#lease;
    const kind = old?.keeper.lost?.kind;
    if (old && (kind === 'keepalive-failed' || kind === 'deadline')) {
      // The lease may have outlived our trust in it: if etcd confirms it and the key still
      // carries it, nobody else can have the ID, and we keep it.
      const sentAt = this.#scheduler.now();
      try {
        await this.#conn.keepalive(old.id, this.#settings.timeoutMs);
        const key = this.#keys.claim(this.#id);
        const reply = await this.#conn.call(`reading ${key}`, (options) =>
          this.#conn.client.get(key).options(options).exec(),
        );
        if (this.#released) return undefined;
        if (reply.kvs[0]?.lease === old.id) {
          const lease = this.#startLease(old.id, old.keeper.ttlMs, sentAt);
          return this.#issue(lease, undefined, reply.header.revision);
        }
      } catch (error) {
        if (!(error instanceof EtcdLeaseLostError)) throw error;
      }
    }
    if (old) {
      this.#lease = undefined;
      await this.#conn.revoke(old.id).catch(() => undefined);
    }
    if (this.#released) return undefined;
    return this.acquire(this.#id >= 0 ? this.#id : undefined);
  }

  #release(): Promise<void> {
    this.#released ??= (async () => {
      this.#wake();
      await this.#recovering;
      const lease = this.#lease;
      this.#lease = undefined;
      lease?.keeper.stop();
      this.#controller?.abort(new EtcdLeaseLostError('released', 'the claim was released'));
      // Records first: their writes are guarded by the lease that is about to go.
      await this.#writes;
      await this.#cancelWatcher();
      let failure: unknown;
      if (lease) {
        try {
          await this.#conn.revoke(lease.id);
        } catch (error) {
          failure = error;
        }
      }
      this.#conn.close();
      if (failure) {
        throw new EtcdUnavailableError(
          `releasing machine ID ${this.#id}: the lease could not be revoked (${(failure as Error).message}); etcd frees the ID when the lease expires, within ${this.#settings.ttlSeconds} s`,
          { cause: failure },
        );
      }
    })();
    return this.#released;
  }
}

/**
 * A machine-ID provider that claims a free ID in [0, 2^bits) from etcd and holds it with a
 * lease, for generators across a fleet:
 *
 * ```ts
 * const sonyflake = await Sonyflake.create({ machineId: etcdMachineId({ endpoints: 'http://etcd:2379' }) });
 * ```
 *
 * The claim it returns fences the generator when the lease can no longer be trusted (a failed
 * keepalive, or TTL minus `fenceMarginMs` since the last confirmed one), renews itself
 * afterwards, records the time reached so the next holder of the ID starts after it, and is
 * released (lease revoked, client closed) by the generator's `close()`.
 *
 * Options are validated here, at once.
 * @throws EtcdOptionError for an option that cannot work (names it).
 * The provider rejects with EtcdUnavailableError (etcd not reachable within `timeoutMs`),
 * MachineBitsMismatchError, CorruptClaimError, MachineIdSpaceFullError, EtcdRequestError.
 */
export function etcdMachineId(options: EtcdMachineIdOptions = {}): EtcdMachineIdProvider {
  const s = validate(options);
  const probes = options.probes ?? DEFAULT_PROBES;
  if (!Number.isInteger(probes) || probes < 0 || probes > 64) {
    throw new EtcdOptionError(
      'probes',
      `expected an integer from 0 to 64, received ${received(options.probes)}`,
    );
  }
  const recordIntervalMs = options.recordIntervalMs ?? DEFAULT_RECORD_INTERVAL_MS;
  if (typeof recordIntervalMs !== 'number' || !Number.isFinite(recordIntervalMs) || recordIntervalMs <= 0) {
    throw new EtcdOptionError(
      'recordIntervalMs',
      `expected a number of ms above 0, received ${received(options.recordIntervalMs)}`,
    );
  }
  const scheduler = (options as Internal).scheduler ?? realScheduler;
  return async ({ bits }: MachineIdContext) => {
    if (s.bits !== undefined && s.bits !== bits) {
      throw new MachineBitsMismatchError(
        `etcdMachineId was set up for a ${s.bits}-bit machine field (bits: ${s.bits}), but the generator's field has ${bits} bits`,
      );
    }
    const conn = new Connection(options, s);
    try {
      return await new Holder(conn, s, probes, recordIntervalMs, bits, scheduler).acquire();
    } catch (error) {
      conn.close();
      throw error;
    }
  };
}
