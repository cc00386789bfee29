import { errorText, setLongTimeout } from '@ids/engine/internal';
import { LeaseStoreRefusedError, StoreUnavailableError } from '@ids/machine-lease/errors';
import { bounded, StoreTimeout } from '@ids/machine-lease/internal';
import { type Cluster, Redis } from 'ioredis';
import { RedisDatabaseError } from './errors.js';
import type { RedisConnectionOptions } from './options.js';
import { checkDatabase, redact } from './url.js';

/** Replies and client errors that waiting will not fix: credentials, permissions, TLS. */
const PERMANENT = /^(WRONGPASS|NOAUTH|NOPERM|ERR AUTH|ERR invalid password|ERR Client sent AUTH)/;
const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS|ERR_SSL|EPROTO/;

function isPermanent(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = String((error as { code?: unknown }).code ?? '');
  return PERMANENT.test(error.message) || TLS_CODES.test(code) || /certificate/i.test(error.message);
}

/** A Redis reply error (the server answered, with an error): ioredis's ReplyError. */
function isReply(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

/**
 * The rule of this store, for a failure that is not a timeout: refused credentials, permissions
 * or TLS, and any reply error (the server answered), are LeaseStoreRefusedError; anything else
 * (nothing listening, a connection closed) is StoreUnavailableError. `where` names the
 * server in the message (`Redis at host:port`), `feature` what it was asked for. Shared by the
 * claims and the locks.
 */
export function redisFailure(
  what: string,
  raw: unknown,
  where: string,
  feature: StoreUnavailableError['feature'],
): Error {
  if (raw instanceof StoreUnavailableError || raw instanceof LeaseStoreRefusedError) return raw;
  if (isPermanent(raw)) {
    const tls =
      TLS_CODES.test(String((raw as { code?: unknown }).code ?? '')) || /certificate/i.test(errorText(raw));
    return new LeaseStoreRefusedError(
      'redis',
      `${what}: ${where} refused${tls ? ' the TLS connection' : ''}: ${errorText(raw)}`,
      { cause: raw },
    );
  }
  if (isReply(raw)) {
    return new LeaseStoreRefusedError(
      'redis',
      `${what}: ${where} answered with an error: ${errorText(raw)}`,
      {
        cause: raw,
      },
    );
  }
  return new StoreUnavailableError('redis', feature, `${what}: ${where} is unavailable: ${errorText(raw)}`, {
    cause: raw,
  });
}

/**
 * One ioredis client plus the rules for talking to it: every call bounded by `timeoutMs`, and
 * its failures sorted into StoreUnavailableError (waiting may help) and LeaseStoreRefusedError (it
 * will not). A client made here queues nothing while disconnected and retries nothing: a
 * keepalive that cannot be sent now must fail now, so that the holder fences at once.
 */
export class Connection {
  readonly client: Redis | Cluster;
  readonly timeoutMs: number;
  readonly #owned: boolean;
  readonly #where: string;
  readonly #feature: StoreUnavailableError['feature'];
  #lastError: unknown;
  #closed = false;
  /** Whether the client was ready once: then "not ready" means the connection was lost. */
  #wasReady = false;
  /** Resolves once a client of ours is known to be in the database its URL names. */
  #database: Promise<void> | undefined;
  readonly #onError = (error: unknown) => {
    this.#lastError = error;
  };

  constructor(
    options: RedisConnectionOptions,
    url: string | undefined,
    timeoutMs: number,
    feature: StoreUnavailableError['feature'],
  ) {
    this.timeoutMs = timeoutMs;
    this.#feature = feature;
    if (options.client) {
      this.client = options.client;
      this.#owned = false;
      this.#where = 'the Redis client given';
    } else {
      const target = url as string;
      this.client = new Redis(target, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: timeoutMs,
        // Reconnect quickly after an outage: the renewal loop waits on it.
        retryStrategy: (times) => Math.min(times * 100, 1000),
        ...(target.startsWith('rediss:') ? { tls: {} } : {}),
        ...options.redisOptions,
      });
      this.#owned = true;
      this.#where = `Redis at ${redact(target)}`;
    }
    // Kept for messages; without a listener ioredis would print every reconnect failure. A
    // client of the user's has the user's own listeners (and may be shared by many claims).
    if (this.#owned) this.client.on('error', this.#onError);
  }

  /** The first connect, waited for by every call made meanwhile. */
  #connecting: Promise<void> | undefined;

  /** Resolves once the client is ready, within `ms`; rejects at once on refused credentials or TLS. */
  #ready(ms: number): Promise<void> {
    const client = this.client;
    if (client.status === 'ready') {
      this.#wasReady = true;
      return Promise.resolve();
    }
    if (this.#closed || client.status === 'end') {
      return Promise.reject(new StoreUnavailableError('redis', this.#feature, `${this.#where} was closed`));
    }
    // Connected once and lost since: fail now rather than wait for the reconnect, so that a
    // keepalive fences at once (the renewal loop retries on its own schedule).
    if (this.#wasReady) {
      return Promise.reject(
        new StoreUnavailableError(
          'redis',
          this.#feature,
          `${this.#where} is reconnecting (${client.status})`,
          {
            cause: this.#lastError,
          },
        ),
      );
    }
    // One wait for every caller: a connection shared by the claims of a process (shareLease)
    // has dozens of calls waiting on its first connect, and a pair of listeners each.
    this.#connecting ??= new Promise<void>((resolve, reject) => {
      const done = (error?: unknown) => {
        client.off('ready', onReady);
        client.off('error', onError);
        this.#connecting = undefined;
        if (error === undefined) resolve();
        else reject(error);
      };
      const onReady = () => {
        this.#wasReady = true;
        done();
      };
      const onError = (error: unknown) => {
        if (isPermanent(error)) done(error);
      };
      client.on('ready', onReady);
      client.on('error', onError);
      if (client.status === 'wait') (client as Redis).connect().catch(onError);
    });
    const connecting = this.#connecting;
    // Each caller waits `ms` at most; the shared wait goes on for the others.
    return new Promise<void>((resolve, reject) => {
      const cancelTimer = setLongTimeout(() => reject(new StoreTimeout()), ms);
      connecting.then(
        () => {
          cancelTimer();
          resolve();
        },
        (error: unknown) => {
          cancelTimer();
          reject(error);
        },
      );
    });
  }

  /**
   * Runs `fn` once the client is ready, all within `timeoutMs` (or `budgetMs` when less), and
   * turns its failure into one of our errors naming `what` was being done.
   */
  async call<T>(
    what: string,
    fn: (client: Redis | Cluster) => Promise<T>,
    budgetMs = this.timeoutMs,
  ): Promise<T> {
    const ms = Math.max(1, Math.min(this.timeoutMs, budgetMs));
    const start = performance.now();
    try {
      return await bounded(ms, async (timeUp) => {
        await Promise.race([this.#ready(ms), timeUp]);
        if (this.#owned) {
          this.#database ??= checkDatabase(this.client as Redis, this.#where);
          // A failed check is asked again next time (the server may have been unreachable).
          await Promise.race([
            this.#database.catch((error) => {
              this.#database = undefined;
              throw error;
            }),
            timeUp,
          ]);
        }
        if (performance.now() - start >= ms) throw new StoreTimeout();
        return fn(this.client);
      });
    } catch (error) {
      throw this.translate(what, error, ms);
    }
  }

  /** Sorts a failure into LeaseStoreRefusedError (waiting will not help) or StoreUnavailableError. */
  translate(what: string, raw: unknown, ms: number): Error {
    if (
      raw instanceof StoreUnavailableError ||
      raw instanceof LeaseStoreRefusedError ||
      raw instanceof RedisDatabaseError
    ) {
      return raw;
    }
    if (raw instanceof StoreTimeout) {
      const last = this.#lastError === undefined ? '' : ` (last error: ${errorText(this.#lastError)})`;
      return new StoreUnavailableError(
        'redis',
        this.#feature,
        `${what}: ${this.#where} did not answer within ${ms} ms (timeoutMs)${last}`,
        {
          cause: this.#lastError,
        },
      );
    }
    return redisFailure(what, raw, this.#where, this.#feature);
  }

  /** Closes the client if we made it (at once: nothing of ours is left to send). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.client.off('error', this.#onError);
    if (this.#owned) this.client.disconnect();
  }
}
