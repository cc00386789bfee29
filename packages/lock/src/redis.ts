// @ids/lock/redis: the locks on Redis. Loaded only by those who use Redis (ioredis and
// @ids/machine-redis are optional peers of @ids/lock).
import { IdsError, InvalidArgumentError } from '@ids/engine';
import {
  LeaseLostError,
  LeaseStoreUnavailableError,
  openRedisClient,
  parseRedisUrl,
} from '@ids/machine-redis';
import { redisFailure } from '@ids/machine-redis/internal';
import type { Redis } from 'ioredis';
import type { LockBackend, Taken } from './backend.js';
import { Locks } from './locks.js';
import { checkStoreMs } from './options.js';
import { EXTEND, LEAVE, RELEASE, TAKE } from './redis-scripts.js';

/** Where the locks live when no prefix is given. */
export const DEFAULT_LOCK_PREFIX = 'ids:lock';

/** How `redisLocks` connects; every option has a default. */
export interface RedisLocksOptions {
  /** `redis://[[user]:password@]host[:port][/db]` or `rediss://...`. Default `redis://127.0.0.1:6379`. */
  readonly url?: string;
  /** The keys' common start (hash-tagged, so one Cluster slot). Default `ids:lock`. */
  readonly prefix?: string;
  /** The longest any exchange with Redis may take, in ms. Default 3,000. */
  readonly timeoutMs?: number;
  /**
   * The fallback poll of a waiter, in ms, should a release's message be lost (a reconnect, a
   * waiter ahead that died). A waiter keeps its place in line for 5 polls without asking. Default 1,000.
   */
  readonly pollMs?: number;
}

/** Opens the locks on Redis: one client for commands, one subscribed to releases. */
export async function redisLocks(options: RedisLocksOptions = {}): Promise<Locks> {
  const timeoutMs = checkStoreMs(options.timeoutMs ?? 3000, 'timeoutMs');
  const pollMs = checkStoreMs(options.pollMs ?? 1000, 'pollMs');
  const prefix = options.prefix ?? DEFAULT_LOCK_PREFIX;
  if (typeof prefix !== 'string' || prefix === '' || /[{}]/.test(prefix)) {
    throw new InvalidArgumentError(
      `expected a non-empty string without braces, received ${JSON.stringify(prefix)}`,
      { option: 'prefix' },
    );
  }
  const url = options.url ?? 'redis://127.0.0.1:6379';
  const where = `connecting to Redis at ${new URL(parseRedisUrl(url).url).host}`;
  // Connecting is bounded too: a Redis that is not listening is LeaseStoreUnavailableError
  // within timeoutMs, not ioredis's bare "Connection is closed." (nor a wait for its retries).
  const client = await withinMs(
    timeoutMs,
    where,
    openRedisClient(url, {
      // A keepalive that cannot be sent now must fail now, so that the holder fences at once.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectTimeout: timeoutMs,
      retryStrategy: (times) => Math.min(times * 100, 1000),
    }),
  );
  const backend = new RedisBackend(client, prefix, pollMs);
  try {
    await withinMs(timeoutMs, `${where} (subscribing to releases)`, backend.subscribe());
  } catch (error) {
    await backend.close();
    throw error;
  }
  return new Locks(backend, { timeoutMs, ...(options as object) });
}

/**
 * A failure of ioredis as machine-redis's one rule sorts it (refused: credentials, permissions,
 * TLS, a reply error; else unavailable), for every call, connecting included, so no bare ioredis
 * error reaches the user.
 */
function redisError(what: string, error: unknown): Error {
  return error instanceof IdsError ? error : redisFailure(what, error, 'Redis');
}

/** `promise`, or LeaseStoreUnavailableError once `ms` have passed without it settling. */
async function withinMs<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } catch (error) {
    throw redisError(what, error);
  } finally {
    clearTimeout(timer);
  }
}

/** The client with the scripts defined on it. */
type Scripted = Redis & {
  [command in 'idsLockTake' | 'idsLockExtend' | 'idsLockRelease' | 'idsLockLeave']: (
    ...args: (string | number)[]
  ) => Promise<unknown>;
};

/** One waiter blocked in `turn`. */
interface Waiter {
  readonly token: string;
  readonly wake: () => void;
}

/**
 * The Redis backend: the scripts of redis-scripts.ts, and a subscriber that wakes the waiter a
 * release names. Every waiter of this process for a name shares one entry of `#waiters`.
 */
class RedisBackend implements LockBackend {
  readonly store = 'redis';
  readonly #client: Scripted;
  readonly #subscriber: Redis;
  readonly #base: string;
  readonly #channel: string;
  readonly #pollMs: number;
  /** Per name: how many "the lock is free, anyone may ask" messages came. */
  readonly #freed = new Map<string, number>();
  /** Tokens a release named as next in line, not yet seen by their waiter. */
  readonly #called = new Set<string>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  /** Tokens of this process standing in a line. */
  readonly #joined = new Set<string>();

  constructor(client: Redis, prefix: string, pollMs: number) {
    // EVALSHA with EVAL as the fallback (ioredis's defineCommand): the scripts are sent whole
    // only once per connection, and again after a restarted Redis answers NOSCRIPT.
    client.defineCommand('idsLockTake', { numberOfKeys: 5, lua: TAKE });
    client.defineCommand('idsLockExtend', { numberOfKeys: 1, lua: EXTEND });
    client.defineCommand('idsLockRelease', { numberOfKeys: 4, lua: RELEASE });
    client.defineCommand('idsLockLeave', { numberOfKeys: 4, lua: LEAVE });
    this.#client = client as Scripted;
    this.#base = `{${prefix}}`;
    this.#channel = `${this.#base}:released`;
    this.#pollMs = pollMs;
    // Subscriptions queue while reconnecting and are renewed after (ioredis's autoResubscribe).
    this.#subscriber = client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined });
    this.#subscriber.on('error', () => undefined);
    this.#subscriber.on('message', (_channel: string, message: string) => this.#onRelease(message));
  }

  async subscribe(): Promise<void> {
    await this.#subscriber.subscribe(this.#channel);
  }

  #keys(name: string): string[] {
    const b = this.#base;
    return [
      `${b}:held:${name}`,
      `${b}:fence:${name}`,
      `${b}:queue:${name}`,
      `${b}:alive:${name}`,
      `${b}:epoch`,
    ];
  }

  #onRelease(message: string): void {
    const at = message.lastIndexOf('/');
    const name = message.slice(0, at);
    const next = message.slice(at + 1);
    if (next === '') this.#freed.set(name, (this.#freed.get(name) ?? 0) + 1);
    else this.#called.add(next);
    for (const waiter of this.#waiters.get(name) ?? []) {
      if (next === '' || next === waiter.token) waiter.wake();
    }
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw redisError(what, error);
    }
  }

  async take(
    name: string,
    token: string,
    ttlMs: number,
    join: boolean,
    budgetMs: number | undefined,
  ): Promise<Taken | undefined> {
    const nowUs = BigInt(Date.now()) * 1000n;
    const what = `taking the lock ${JSON.stringify(name)}`;
    const sent = this.#client.idsLockTake(
      ...this.#keys(name),
      token,
      ttlMs,
      String(nowUs),
      this.#pollMs * 5,
      join ? '1' : '0',
    );
    const reply = (await this.#call(what, () =>
      budgetMs === undefined ? sent : withinMs(budgetMs, what, sent),
    )) as [number, string?, number?];
    this.#called.delete(token);
    if (reply[0] !== 1) {
      if (join) this.#joined.add(token);
      return undefined;
    }
    this.#joined.delete(token);
    return { fence: BigInt(reply[1] as string), quarantineMs: Number(reply[2]) };
  }

  async extend(name: string, token: string, ttlMs: number, timeoutMs: number): Promise<void> {
    const [held] = this.#keys(name);
    const done = await this.#call(`extending the lock ${JSON.stringify(name)}`, () =>
      Promise.race([
        this.#client.idsLockExtend(held as string, token, ttlMs),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref(),
        ),
      ]),
    );
    if (done !== 1) {
      throw new LeaseLostError(
        'redis',
        'key-lost',
        `the lock ${held} no longer carries this holder's token (it expired, was deleted, or Redis forgot it)`,
      );
    }
  }

  async release(name: string, token: string): Promise<void> {
    await this.#call(`releasing the lock ${JSON.stringify(name)}`, () =>
      this.#client.idsLockRelease(...this.#keys(name).slice(0, 4), token, this.#channel, name),
    );
  }

  async leave(name: string, token: string): Promise<void> {
    this.#called.delete(token);
    // Only a token that joined has a place to give up (tryAcquire never joins).
    if (!this.#joined.delete(token)) return;
    await this.#call(`leaving the line for the lock ${JSON.stringify(name)}`, () =>
      this.#client.idsLockLeave(...this.#keys(name).slice(0, 4), token, this.#channel, name),
    );
  }

  mark(name: string): number {
    return this.#freed.get(name) ?? 0;
  }

  turn(name: string, token: string, mark: number, signal: AbortSignal): Promise<void> {
    if (this.mark(name) !== mark || this.#called.has(token) || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiters = this.#waiters.get(name) ?? new Set<Waiter>();
      this.#waiters.set(name, waiters);
      const done = () => {
        clearTimeout(poll);
        signal.removeEventListener('abort', done);
        waiters.delete(waiter);
        if (waiters.size === 0) this.#waiters.delete(name);
        resolve();
      };
      const waiter: Waiter = { token, wake: done };
      waiters.add(waiter);
      const poll = setTimeout(done, this.#pollMs);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  transient(error: unknown): boolean {
    return error instanceof LeaseStoreUnavailableError;
  }

  async close(): Promise<void> {
    this.#subscriber.disconnect();
    this.#client.disconnect();
  }
}
