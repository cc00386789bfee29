// Idempotency tokens on Redis: a client asks for a token before a payment-style call, sends it
// with the call, and the service consumes it once. The consume is one Lua script, so two
// consumers racing on one token cannot both see it unused: Redis runs scripts one at a time.
import { InvalidArgumentError } from '@ids/engine';
import { errorText, importOptional } from '@ids/engine/internal';
import type { Redis as RedisClient } from 'ioredis';
import { TokenStoreError } from './errors.js';

/** What consuming a token found. */
export type ConsumeOutcome = 'consumed' | 'used' | 'unknown';

/** Where tokens are kept. */
export interface TokenStore {
  /** Stores a new token for `ttlSeconds`. @throws TokenStoreError when the store cannot. */
  issue(token: string, ttlSeconds: number): Promise<void>;
  /**
   * Marks a token used: `consumed` the first time, `used` after that (until it expires),
   * `unknown` for a token never issued or expired. @throws TokenStoreError when the store cannot.
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

function storeError(what: string, error: unknown): TokenStoreError {
  const reason = errorText(error);
  return new TokenStoreError(`the token store (Redis) could not ${what}: ${reason}`, { cause: error });
}

/**
 * A token store on the Redis at `url` (`redis://[:password@]host:port[/db]`). Commands fail at
 * once while the connection is down (no offline queue), so a request is answered 503 rather
 * than held.
 * @throws TokenStoreError when Redis cannot be reached within `connectTimeoutMs`;
 * InvalidArgumentError for a malformed URL or database, RedisDatabaseError for a database the server
 * does not have (from @ids/machine-redis, which opens every redis:// URL).
 */
export async function redisTokenStore(
  url: string,
  options: RedisTokenStoreOptions = {},
): Promise<TokenStore> {
  const prefix = options.prefix ?? DEFAULT_TOKEN_PREFIX;
  // Loaded only with Redis configured, so a server without it does not pay for ioredis at start.
  const [{ openRedisClient }, { RedisDatabaseError }] = await Promise.all([
    importOptional(
      '@ids/machine-redis',
      () => import('@ids/machine-redis/internal'),
      'a redis:// token store',
    ),
    importOptional('@ids/machine-redis', () => import('@ids/machine-redis'), 'a redis:// token store'),
  ]);
  let redis: RedisClient;
  try {
    redis = await openRedisClient(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
  } catch (error) {
    // A bad URL or database is the configuration's fault: reported as it is, not as an outage.
    if (error instanceof InvalidArgumentError || error instanceof RedisDatabaseError) throw error;
    throw storeError(`connect to ${new URL(url).host}`, error);
  }
  return {
    async issue(token, ttlSeconds) {
      let reply: unknown;
      try {
        reply = await redis.set(prefix + token, 'issued', 'EX', ttlSeconds, 'NX');
      } catch (error) {
        throw storeError('store a token', error);
      }
      // A fresh ID is never issued twice; a key already there means another writer shares the prefix.
      if (reply !== 'OK') throw new TokenStoreError(`token ${token} already exists in the store`);
    },
    async consume(token) {
      let reply: unknown;
      try {
        reply = await redis.eval(CONSUME, 1, prefix + token);
      } catch (error) {
        throw storeError('consume a token', error);
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
