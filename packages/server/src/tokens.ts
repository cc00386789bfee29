// Idempotency tokens on Redis: a client asks for a token before a payment-style call, sends it
// with the call, and the service consumes it once. The consume is one Lua script, so two
// consumers racing on one token cannot both see it unused: Redis runs scripts one at a time.
import { IdsError } from '@ids/engine';
import { importOptional } from '@ids/engine/internal';
import type { Redis as RedisClient } from 'ioredis';
import { HttpError } from './errors.js';

/** What consuming a token found. */
export type ConsumeOutcome = 'consumed' | 'used' | 'unknown';

/** Where tokens are kept. */
export interface TokenStore {
  /**
   * Stores a new token for `ttlSeconds`. @throws StoreUnavailableError (`feature: 'token'`) when
   * the store does not answer; HttpError 503 ERR_TOKEN_EXISTS when the token is already there.
   */
  issue(token: string, ttlSeconds: number): Promise<void>;
  /**
   * Marks a token used: `consumed` the first time, `used` after that (until it expires),
   * `unknown` for a token never issued or expired. @throws StoreUnavailableError (`feature:
   * 'token'`) when the store does not answer.
   */
  consume(token: string): Promise<ConsumeOutcome>;
  /** Closes the connection. */
  close(): Promise<void>;
}

/** Default key prefix of tokens in Redis. */
export const DEFAULT_TOKEN_PREFIX = 'ids:token:';

// The used marker keeps the token's TTL, so "already used" is answered until it would have
// expired, then "unknown" like any expired token.
const CONSUME = `
local state = redis.call('GET', KEYS[1])
if not state then return 0 end
if state == 'used' then return 2 end
redis.call('SET', KEYS[1], 'used', 'KEEPTTL')
return 1
`;

/** How `redisTokenStore` connects. */
export interface RedisTokenStoreOptions {
  /** Key prefix. Default DEFAULT_TOKEN_PREFIX. */
  readonly prefix?: string;
  /** How long to wait for the first connection, in ms. Default 5000. */
  readonly connectTimeoutMs?: number;
}

/**
 * A token store on the Redis at `url` (`redis://[:password@]host:port[/db]`). Commands fail at
 * once while the connection is down (no offline queue), so a request is answered 503 rather
 * than held. Failures are sorted by @ids/machine-redis's one rule for Redis: no answer is
 * StoreUnavailableError with `store: 'redis'`, `feature: 'token'`; refused credentials, TLS or a
 * reply error is LeaseStoreRefusedError.
 * @throws StoreUnavailableError when Redis cannot be reached within `connectTimeoutMs`;
 * InvalidArgumentError for a malformed URL or database, RedisDatabaseError for a database the server
 * does not have (from @ids/machine-redis, which opens every redis:// URL).
 */
export async function redisTokenStore(
  url: string,
  options: RedisTokenStoreOptions = {},
): Promise<TokenStore> {
  const prefix = options.prefix ?? DEFAULT_TOKEN_PREFIX;
  // Loaded only with Redis configured, so a server without it does not pay for ioredis at start.
  const { openRedisClient, redisFailure } = await importOptional(
    '@ids/machine-redis',
    () => import('@ids/machine-redis/internal'),
    'a redis:// token store',
  );
  // A bad URL or database is the configuration's fault (an IdsError): reported as it is, not as
  // an outage. Past openRedisClient the URL is known to parse.
  const failure = (what: string, error: unknown) =>
    error instanceof IdsError
      ? error
      : redisFailure(`tokens: ${what}`, error, `Redis at ${new URL(url).host}`, 'token');
  let redis: RedisClient;
  try {
    redis = await openRedisClient(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
  } catch (error) {
    throw failure('connecting', error);
  }
  return {
    async issue(token, ttlSeconds) {
      let reply: unknown;
      try {
        reply = await redis.set(prefix + token, 'issued', 'EX', ttlSeconds, 'NX');
      } catch (error) {
        throw failure('storing a token', error);
      }
      // A fresh ID is never issued twice; a key already there means another writer shares the prefix.
      if (reply !== 'OK') {
        throw new HttpError(
          503,
          'ERR_TOKEN_EXISTS',
          `expected token ${token} to be new in the store, received one already there (another writer on the prefix ${JSON.stringify(prefix)}?)`,
        );
      }
    },
    async consume(token) {
      let reply: unknown;
      try {
        reply = await redis.eval(CONSUME, 1, prefix + token);
      } catch (error) {
        throw failure('consuming a token', error);
      }
      if (reply === 1) return 'consumed';
      if (reply === 2) return 'used';
      return 'unknown';
    },
    async close() {
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}
