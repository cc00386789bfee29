// @ids/lock/redis: the locks on Redis. Loaded only by those who use Redis (ioredis and
// @ids/machine-redis are optional peers of @ids/lock).
import { IdsError, InvalidArgumentError } from '@ids/engine';
import { LeaseLostError, StoreUnavailableError } from '@ids/machine-redis';
import { openRedisClient, parseRedisUrl, redisFailure } from '@ids/machine-redis/internal';
import { Command, type Redis } from 'ioredis';
import type { LockBackend, Taken, TakeRequest } from './backend.js';
import { Locks } from './locks.js';
import { checkStoreMs } from './options.js';
import { EXTEND, LEAVE, type LuaScript, RELEASE, TAKE } from './redis-scripts.js';

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
  // Connecting is bounded too: a Redis that is not listening is StoreUnavailableError
  // within timeoutMs, not ioredis's bare "Connection is closed." (nor a wait for its retries).
  const client = await withinMs(
    timeoutMs,
    where,
    openRedisClient(url, {
      // A keepalive that cannot be sent now must fail now, so that the holder fences at once.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // No commandTimeout: it arms and clears a timer per command; CommandDeadlines bounds every
      // command by timeoutMs with one timer for the client.
      connectTimeout: timeoutMs,
      retryStrategy: (times) => Math.min(times * 100, 1000),
    }),
  );
  const backend = new RedisBackend(client, prefix, pollMs, timeoutMs);
  // A test seam: sees the backend, to count what it keeps per waiter.
  (options as { onBackend?: (b: RedisBackend) => void }).onBackend?.(backend);
  try {
    await withinMs(timeoutMs, `${where} (subscribing to releases, loading the scripts)`, backend.open());
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
  return error instanceof IdsError ? error : redisFailure(what, error, 'Redis', 'lock');
}

/** `promise`, or StoreUnavailableError once `ms` have passed without it settling. */
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

/** A command sent through CommandDeadlines: when it was sent, on performance.now(). */
interface Stamped extends Command {
  sentAt?: number;
}

/**
 * Bounds every command sent through it by `timeoutMs`, as ioredis's commandTimeout does, with one
 * timer for the client rather than one armed and cleared per command (a measurable part of an
 * uncontended acquire + release). Redis answers a connection's commands in the order they were
 * sent, so the commands waiting for an answer are ioredis's command queue, oldest first: the
 * timer is armed for the oldest one's deadline, and when it fires it fails every command past
 * its deadline (as commandTimeout does: the command is rejected, its late answer ignored) and is
 * armed again for the oldest left, or not at all when none is left. A command sent while the
 * timer is armed needs nothing: its deadline is later than the one the timer waits for.
 */
class CommandDeadlines {
  readonly #client: Redis;
  readonly #timeoutMs: number;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(client: Redis, timeoutMs: number) {
    this.#client = client;
    this.#timeoutMs = timeoutMs;
  }

  /** Sends `name` with `args`: its answer as text, or its error, or a timeout after timeoutMs. */
  send(name: string, args: (string | number)[]): Promise<unknown> {
    const command: Stamped = new Command(name, args, { replyEncoding: 'utf8' });
    command.sentAt = performance.now();
    this.#client.sendCommand(command);
    if (this.#timer === undefined && !this.#closed) this.#arm(this.#timeoutMs);
    return command.promise;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#expire(), ms);
    // Armed past the last answer until it fires: it must not keep the process alive.
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    const queue = this.#client.commandQueue;
    for (let i = 0; i < queue.length; i++) {
      const command = queue.peekAt(i)?.command as Stamped | undefined;
      // ioredis's own commands (the ready check) carry no stamp, and settled ones wait only
      // for their late answer.
      if (command?.sentAt === undefined || command.isSettled) continue;
      const left = command.sentAt + this.#timeoutMs - now;
      if (left > 0) {
        this.#arm(left);
        return;
      }
      command.reject(new Error(`no answer within ${this.#timeoutMs} ms`));
    }
  }
}

/** What a take is doing, as its errors say. */
function takingWhat(name: string): string {
  return `taking the lock ${JSON.stringify(name)}`;
}

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
  readonly #client: Redis;
  readonly #commands: CommandDeadlines;
  readonly #subscriber: Redis;
  readonly #base: string;
  readonly #channel: string;
  readonly #epoch: string;
  readonly #pollMs: number;
  /**
   * Tokens of this process a release named as next in line, not yet seen by their waiter. Only
   * this process's: every process hears every release, and a set of other processes' tokens
   * would grow for as long as the process lives.
   */
  readonly #called = new Set<string>();
  /** Tokens of this process with a joining take on the wire (its release may come before its reply). */
  readonly #asking = new Set<string>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  /** Tokens of this process standing in a line. */
  readonly #joined = new Set<string>();

  constructor(client: Redis, prefix: string, pollMs: number, timeoutMs: number) {
    this.#client = client;
    this.#commands = new CommandDeadlines(client, timeoutMs);
    this.#base = `{${prefix}}`;
    this.#channel = `${this.#base}:released`;
    this.#epoch = `${this.#base}:epoch`;
    this.#pollMs = pollMs;
    // Subscriptions queue while reconnecting and are renewed after (ioredis's autoResubscribe).
    this.#subscriber = client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined });
    this.#subscriber.on('error', () => undefined);
    this.#subscriber.on('message', (_channel: string, message: string) => this.#onRelease(message));
  }

  /** Subscribes to releases and loads the scripts, so that every call is an EVALSHA. */
  async open(): Promise<void> {
    await Promise.all([
      this.#subscriber.subscribe(this.#channel),
      ...[TAKE, EXTEND, RELEASE, LEAVE].map((s) =>
        this.#client.script('LOAD', s.lua).catch((error: unknown) => {
          // A user whose ACL allows EVALSHA and EVAL but not SCRIPT (NOPERM) still has working
          // locks: each script is then sent whole at its first NOSCRIPT (see #run).
          if (!(error instanceof Error && error.name === 'ReplyError')) throw error;
        }),
      ),
    ]);
  }

  /**
   * Runs a script by its SHA1; sends it whole only when Redis answers NOSCRIPT (it restarted, or
   * its script cache was flushed). Not ioredis's defineCommand, which wraps each call in a
   * command subclass and a second promise: about 6 µs more CPU per call, measured. `args` starts
   * with the script's SHA1 and its number of keys, as EVALSHA takes them.
   */
  #run(script: LuaScript, args: (string | number)[]): Promise<unknown> {
    return this.#commands.send('evalsha', args).catch((error: unknown) => this.#whole(script, args, error));
  }

  /**
   * After `args`' EVALSHA failed with `error`: the script sent whole when Redis had lost it
   * (NOSCRIPT), else `error` again. The hot paths (take, release) await the EVALSHA itself and
   * call this from their own catch: a `.catch` per call is a promise and a turn more.
   */
  #whole(script: LuaScript, args: (string | number)[], error: unknown): Promise<unknown> {
    if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) return Promise.reject(error);
    const whole = args.slice();
    whole[0] = script.lua;
    return this.#commands.send('eval', whole);
  }

  /** RELEASE's or LEAVE's arguments (see redis-scripts.ts): the held, queue and alive keys of `name`, then `token`. */
  #line(script: LuaScript, name: string, token: string): (string | number)[] {
    const b = this.#base;
    return [script.sha, script.keys, `${b}:held:${name}`, `${b}:queue:${name}`, `${b}:alive:${name}`, token];
  }

  #onRelease(message: string): void {
    const at = message.lastIndexOf('/');
    const name = message.slice(0, at);
    const next = message.slice(at + 1);
    if (this.#joined.has(next) || this.#asking.has(next)) this.#called.add(next);
    for (const waiter of this.#waiters.get(name) ?? []) {
      if (next === waiter.token) waiter.wake();
    }
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw redisError(what, error);
    }
  }

  async take(request: TakeRequest): Promise<Taken | undefined> {
    const { name, token, ttlMs, join, budgetMs } = request;
    if (join) this.#asking.add(token);
    let reply: unknown;
    try {
      const b = this.#base;
      const args = [
        TAKE.sha,
        TAKE.keys,
        `${b}:held:${name}`,
        `${b}:fence:${name}`,
        `${b}:queue:${name}`,
        `${b}:alive:${name}`,
        this.#epoch,
        token,
        ttlMs,
        // The client's clock in µs, for a counter that starts again; a place's lifetime; whether
        // to join: one argument (see TAKE).
        `${Date.now()}000:${this.#pollMs * 5}:${join ? '1' : '0'}`,
      ];
      if (budgetMs === undefined) {
        try {
          reply = await this.#commands.send('evalsha', args);
        } catch (error) {
          reply = await this.#whole(TAKE, args, error);
        }
      } else reply = await withinMs(budgetMs, takingWhat(name), this.#run(TAKE, args));
    } catch (error) {
      throw redisError(takingWhat(name), error);
    } finally {
      if (join) this.#asking.delete(token);
    }
    this.#called.delete(token);
    // The fence alone, an integer (see TAKE's reply): the lock is held, nothing to wait out.
    if (typeof reply === 'number' && reply > 0) {
      this.#joined.delete(token);
      return { fence: BigInt(reply), quarantineMs: 0 };
    }
    if (reply === 0) {
      if (join) this.#joined.add(token);
      return undefined;
    }
    this.#joined.delete(token);
    // {fence, quarantine ms}: a fence past 2^53 as its decimal digits.
    const [fence, quarantineMs] = reply as [number | string, number];
    return { fence: BigInt(fence), quarantineMs };
  }

  async extend(name: string, token: string, ttlMs: number, timeoutMs: number): Promise<void> {
    const held = `${this.#base}:held:${name}`;
    const done = await this.#call(`extending the lock ${JSON.stringify(name)}`, () =>
      Promise.race([
        this.#run(EXTEND, [EXTEND.sha, EXTEND.keys, held, token, ttlMs]),
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
    const args = this.#line(RELEASE, name, token);
    try {
      try {
        await this.#commands.send('evalsha', args);
      } catch (error) {
        await this.#whole(RELEASE, args, error);
      }
    } catch (error) {
      throw redisError(`releasing the lock ${JSON.stringify(name)}`, error);
    }
  }

  async leave(name: string, token: string): Promise<void> {
    this.#called.delete(token);
    // Only a token that joined has a place to give up (tryAcquire never joins).
    if (!this.#joined.delete(token)) return;
    await this.#call(`leaving the line for the lock ${JSON.stringify(name)}`, () =>
      this.#run(LEAVE, this.#line(LEAVE, name, token)),
    );
  }

  turn(name: string, token: string, signal: AbortSignal): Promise<void> {
    if (this.#called.has(token) || signal.aborted) return Promise.resolve();
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

  /** How many tokens this backend keeps for waiters (called, joined, asking): for a leak test. */
  kept(): number {
    return this.#called.size + this.#joined.size + this.#asking.size + this.#waiters.size;
  }

  transient(error: unknown): boolean {
    return error instanceof StoreUnavailableError;
  }

  async close(): Promise<void> {
    this.#commands.close();
    this.#subscriber.disconnect();
    this.#client.disconnect();
  }
}
