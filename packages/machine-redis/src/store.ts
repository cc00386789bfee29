import type { Attempt, LeaseStore } from '@ids/machine-lease';
import { LeaseCorruptClaimError, LeaseLostError } from '@ids/machine-lease/errors';
import type { Granted, Watch } from '@ids/machine-lease/internal';
import type { Connection } from './connection.js';
import { Keys, newOwnerValue, parseOwner, parseTime } from './keys.js';
import { CREATE, DELETE, EXTEND_ALL, LIST, WRITE_TIME } from './scripts.js';

/** A lease in Redis: a random token in the claim's value, and the keys that carry it. */
interface TokenLease {
  readonly value: string;
  readonly ttlMs: number;
  readonly ids: Set<number>;
  /** Claims being created under it: a keepalive waits for them (see keepalive). */
  readonly creating: Set<Promise<unknown>>;
}

/** A member of the claim index: a decimal machine ID. */
const MEMBER = /^(0|[1-9]\d{0,9})$/;

const HOLDS = `if redis.pcall('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0`;

/**
 * Redis as a LeaseStore. Redis has no leases: a "lease" here is a random token, and each claim
 * is a key `SET NX PX ttl` whose value carries it. A keepalive is a compare-and-extend of every
 * key carrying the token, a revoke a compare-and-delete, so a holder only ever extends or
 * deletes its own key. There is no notice from Redis: a keepalive that finds a key gone or
 * re-taken reports that claim lost (see watch), within one keepalive interval.
 */
export class RedisStore implements LeaseStore {
  readonly name = 'redis';
  readonly keys: Keys;
  readonly #conn: Connection;
  readonly #leases = new Map<string, TokenLease>();
  /** Per token, who to tell when a keepalive finds a claim of it gone (see watch). */
  readonly #watchers = new Map<string, Map<number, (what: string) => void>>();

  constructor(conn: Connection, prefix: string) {
    this.#conn = conn;
    this.keys = new Keys(prefix);
  }

  /** The keys' common start, as messages name it. */
  get where(): string {
    return `${this.keys.base}:`;
  }

  claimKey(id: number): string {
    return this.keys.claim(id);
  }

  /** A fresh token; nothing is sent until a claim is made with it. */
  async grant(ttlSeconds: number): Promise<Granted> {
    const { token, value } = newOwnerValue();
    this.#leases.set(token, { value, ttlMs: ttlSeconds * 1000, ids: new Set(), creating: new Set() });
    return { id: token, ttlMs: ttlSeconds * 1000 };
  }

  #lease(token: string): TokenLease {
    const lease = this.#leases.get(token);
    if (!lease) throw new LeaseLostError('redis', 'lease-expired', `the claim token ${token} was released`);
    return lease;
  }

  /**
   * Extends every key carrying the token by the TTL, from the moment the script runs (after we
   * sent it, so the rule "alive until send time + TTL" holds), all in one script: a token
   * carrying the claims of a whole process (`shareLease`) costs one command per keepalive. A
   * claim still being created is waited for first: its `SET PX` may already have run, and
   * extending only what we know of would confirm a deadline that key does not have. With no key
   * yet there is nothing to keep. A claim found gone or re-taken is forgotten (so that the next
   * keepalive confirms the others) and reported: the lease is lost, and each claim on it checks
   * its own key before it issues again.
   */
  async keepalive(token: string, timeoutMs: number): Promise<void> {
    const lease = this.#lease(token);
    if (lease.creating.size > 0) await Promise.allSettled([...lease.creating]);
    const ids = [...lease.ids];
    if (ids.length === 0) return;
    const keys = ids.map((id) => this.keys.claim(id));
    const lost = (await this.#conn.call(
      ids.length === 1 ? `extending ${keys[0]}` : `extending ${ids.length} claims of one holder`,
      (c) => c.eval(EXTEND_ALL, keys.length + 1, this.keys.index, ...keys, lease.value, lease.ttlMs, ...ids),
      timeoutMs,
    )) as string[];
    if (lost.length === 0) return;
    const watchers = this.#watchers.get(token);
    const told = lost.map((id) => watchers?.get(Number(id)));
    for (const id of lost) lease.ids.delete(Number(id));
    if (told.every((tell) => tell !== undefined)) {
      // Each lost claim is told alone; the others were extended, and the lease with them.
      for (const tell of told) tell?.('deleted, expired or taken by another holder (a keepalive found it)');
      return;
    }
    {
      const named = lost.map((id) => this.keys.claim(Number(id))).join(', ');
      throw new LeaseLostError(
        'redis',
        'key-lost',
        `the claim${lost.length === 1 ? '' : 's'} ${named} no longer carr${lost.length === 1 ? 'ies' : 'y'} this holder's token (expired, deleted, or forgotten by Redis)`,
      );
    }
  }

  /**
   * Redis sends no notice: the keepalive finds a claim gone and tells its watcher, so that a
   * claim lost among several of one token fences that claim alone (a claim not watched yet
   * fails the whole keepalive instead).
   */
  watch(token: string, id: number, _revision: string, lost: (what: string) => void): Watch {
    let watchers = this.#watchers.get(token);
    if (!watchers) {
      watchers = new Map();
      this.#watchers.set(token, watchers);
    }
    watchers.set(id, lost);
    return {
      cancel: async () => {
        const current = this.#watchers.get(token);
        if (current?.get(id) !== lost) return;
        current.delete(id);
        if (current.size === 0) this.#watchers.delete(token);
      },
    };
  }

  /** Deletes the claim of `id` if it still carries the token; the token's other claims stay. */
  async drop(token: string, id: number): Promise<void> {
    const lease = this.#leases.get(token);
    if (!lease) return;
    if (lease.creating.size > 0) await Promise.allSettled([...lease.creating]);
    const key = this.keys.claim(id);
    await this.#conn.call(`releasing ${key}`, (c) =>
      c.eval(DELETE, 2, key, this.keys.index, lease.value, id),
    );
    lease.ids.delete(id);
  }

  /** Deletes every key still carrying the token (compare-and-delete). */
  async revoke(token: string): Promise<void> {
    const lease = this.#leases.get(token);
    if (!lease) return;
    if (lease.creating.size > 0) await Promise.allSettled([...lease.creating]);
    this.#leases.delete(token);
    for (const id of lease.ids) {
      const key = this.keys.claim(id);
      await this.#conn.call(`releasing ${key}`, (c) =>
        c.eval(DELETE, 2, key, this.keys.index, lease.value, id),
      );
    }
  }

  tryCreate(token: string, id: number): Promise<Attempt> {
    const lease = this.#lease(token);
    const attempt = this.#create(lease, id);
    lease.creating.add(attempt);
    return attempt.finally(() => lease.creating.delete(attempt));
  }

  /**
   * `SET NX PX` and the recorded time in one script. When no time is recorded for the ID, the
   * past is unknown (never claimed, or claimed and forgotten by a Redis that restarted without
   * persistence): the script records `now + TTL` and the holder waits one TTL before issuing,
   * so that a holder Redis forgot has fenced by itself first.
   *
   * @throws LeaseCorruptClaimError when the claim or its time holds something this package did
   * not write (nothing is written then).
   */
  async #create(lease: TokenLease, id: number): Promise<Attempt> {
    const key = this.keys.claim(id);
    const timeKey = this.keys.time(id);
    const reply = (await this.#conn.call(`claiming ${key}`, (c) =>
      c.eval(
        CREATE,
        3,
        key,
        timeKey,
        this.keys.index,
        lease.value,
        lease.ttlMs,
        id,
        Date.now() + lease.ttlMs,
      ),
    )) as [number, string];
    const [status, data] = reply;
    if (status === 3) {
      const at = data === 'time' ? timeKey : key;
      throw new LeaseCorruptClaimError(
        'redis',
        at,
        data === 'time'
          ? `the recorded time ${at} holds something other than decimal Unix milliseconds; remove the key or use another prefix`
          : `the claim ${at} holds a value of another type than a string; remove the key or use another prefix`,
      );
    }
    if (status === 0) {
      // Read it only to refuse garbage: a valid holder's identity is not otherwise needed here.
      parseOwner(key, data);
      return { held: false };
    }
    lease.ids.add(id);
    const notBefore = data === '' ? undefined : parseTime(timeKey, data);
    // A recorded time ahead of the clock is the holder's to wait for (bounded, and said).
    return { held: true, notBefore, quarantineMs: status === 2 ? lease.ttlMs : 0, revision: '' };
  }

  async listTaken(): Promise<Set<number>> {
    const index = this.keys.index;
    const reply = (await this.#conn.call(`listing the claims in ${index}`, (c) => c.eval(LIST, 1, index))) as
      | [number, string]
      | null;
    if (!Array.isArray(reply)) {
      throw new LeaseCorruptClaimError(
        'redis',
        index,
        `the claim index ${index} is not a sorted set; remove the key or use another prefix`,
      );
    }
    const [count, joined] = reply;
    const taken = new Set<number>();
    if (count === 0) return taken;
    const members = joined.split(',');
    for (const member of members) {
      if (!MEMBER.test(member)) {
        throw new LeaseCorruptClaimError(
          'redis',
          index,
          `the claim index ${index} holds ${JSON.stringify(member.slice(0, 40))}: expected decimal machine IDs; remove the key or use another prefix`,
        );
      }
      taken.add(Number(member));
    }
    if (members.length !== count) {
      // Every part a decimal ID, but more parts than members: a member held a comma.
      throw new LeaseCorruptClaimError(
        'redis',
        index,
        `the claim index ${index} holds a member with a comma in it: expected decimal machine IDs; remove the key or use another prefix`,
      );
    }
    return taken;
  }

  async writeTime(token: string, id: number, timeMs: number): Promise<boolean> {
    const lease = this.#leases.get(token);
    if (!lease) return false;
    const key = this.keys.claim(id);
    const timeKey = this.keys.time(id);
    const done = await this.#conn.call(`recording the time of ${key}`, (c) =>
      c.eval(WRITE_TIME, 2, key, timeKey, lease.value, timeMs),
    );
    if (done === -1) {
      throw new LeaseCorruptClaimError(
        'redis',
        timeKey,
        `the recorded time ${timeKey} holds something other than decimal Unix milliseconds; it was left as it is`,
      );
    }
    return done === 1;
  }

  async holds(token: string, id: number): Promise<{ revision: string } | undefined> {
    const lease = this.#leases.get(token);
    if (!lease) return undefined;
    const key = this.keys.claim(id);
    const held = await this.#conn.call(`reading ${key}`, (c) => c.eval(HOLDS, 1, key, lease.value));
    return held === 1 ? { revision: '' } : undefined;
  }

  close(): void {
    this.#conn.close();
  }
}
