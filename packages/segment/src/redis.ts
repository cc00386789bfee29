// The Redis store: INCRBY on one key per tag. @ids/machine-redis (and through it ioredis),
// which opens every redis:// URL of @ids, is imported inside the factory, so importing
// @ids/segment does not load it.
import { IdsError, InvalidArgumentError, StoreUnavailableError } from '@ids/engine';
import { errorText, importOptional, received } from '@ids/engine/internal';
import { StoreCorruptError, UnknownTagError } from './errors.js';
import { checkedOperations, rangeEndingAt, type SegmentStore, storedMaxId, tagExists } from './store.js';

/** What the Redis store needs from a client: ioredis fits. */
export interface RedisClient {
  /** EVAL script numKeys key... arg... */
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** How `redisStore` reaches Redis. */
export interface RedisStoreOptions {
  /**
   * A `redis://[[user]:password@]host[:port][/db]` URL; the store opens an ioredis client and
   * closes it on `close()`. A malformed URL or database is InvalidArgumentError, a database the
   * server does not have RedisDatabaseError (both from @ids/machine-redis).
   */
  readonly url?: string;
  /** Your own ioredis client (anything with `eval`): used as is, never closed. */
  readonly client?: RedisClient;
  /** Prefix of the key of each tag. Default "ids:segment:". */
  readonly prefix?: string;
  /** How long a command may take before it fails, in ms. Default 5000. */
  readonly timeoutMs?: number;
}

// A missing key answers nil instead of letting INCRBY start it from 0: a Redis that lost its
// data (restarted without persistence, failed over to an empty replica) must not hand out 1
// again. GET after INCRBY returns the value as a string, exact past 2^53 (a Lua number is not).
const ALLOCATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('INCRBY', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])`;

// Creates the key at ARGV[1], or raises it there when it holds less; otherwise answers what it
// holds, for the refusal. Values are compared as digit strings (length, then order), exact past
// 2^53 where a Lua number is not; a value that is not plain digits is never overwritten.
const CREATE = `
local held = redis.call('GET', KEYS[1])
if held == false then redis.call('SET', KEYS[1], ARGV[1]) return 'created' end
local digits = held == '0' or string.match(held, '^[1-9][0-9]*$')
if digits and (#held < #ARGV[1] or (#held == #ARGV[1] and held < ARGV[1])) then
  redis.call('SET', KEYS[1], ARGV[1])
  return 'raised'
end
return {held}`;

/**
 * Runs a script, with every failure that is no reply of the server's (a client that is not
 * connected, a connection closed, a command timed out) rejected as StoreUnavailableError, the
 * client's error its cause: where a store's client cannot reach Redis, createTag and allocate
 * said so with ioredis's own errors ("Stream isn't writeable ..."). A reply (ReplyError) passes
 * unchanged, for the caller to read.
 */
async function evalAnswered(
  redis: RedisClient,
  where: string,
  script: string,
  key: string,
  arg: string | number,
): Promise<unknown> {
  try {
    return await redis.eval(script, 1, key, arg);
  } catch (error) {
    if ((error as { name?: unknown } | null)?.name === 'ReplyError') throw error;
    throw new StoreUnavailableError(
      'redis',
      'segment',
      `${where}: expected Redis to answer, received ${errorText(error)}`,
      { cause: error },
    );
  }
}

/**
 * A segment store on Redis: each tag is a key advanced with INCRBY (the design's Redis INCR, in
 * segments). Redis without persistence forgets the keys on restart: the store then answers
 * UnknownTagError, never 1 again, until an operator creates the tag again above the highest ID
 * it issued (createTag; nothing in Redis can remember that number for it).
 *
 * @throws InvalidArgumentError when neither or both of url and client are given, or for a bad
 * prefix; InvalidArgumentError or RedisDatabaseError for a bad URL (see `url`).
 */
export async function redisStore(options: RedisStoreOptions): Promise<SegmentStore> {
  const { url, client } = options ?? {};
  if ((url === undefined) === (client === undefined)) {
    throw new InvalidArgumentError(
      `redisStore: expected exactly one of url and client, received ${received(url)} and ${received(client)}`,
    );
  }
  const prefix = options.prefix ?? 'ids:segment:';
  if (typeof prefix !== 'string' || prefix.length > 128) {
    throw new InvalidArgumentError(
      `prefix: expected a string of up to 128 characters, received ${received(prefix)}`,
    );
  }
  let redis: RedisClient;
  let close = async () => {};
  if (client !== undefined) {
    if (typeof client?.eval !== 'function') {
      throw new InvalidArgumentError(`client: expected an ioredis client, received ${received(client)}`);
    }
    redis = client;
  } else {
    const { openRedisClient } = await importOptional(
      '@ids/machine-redis',
      () => import('@ids/machine-redis/internal'),
      'a redis:// segment store',
    );
    const timeoutMs = options.timeoutMs ?? 5000;
    const own = await openRedisClient(url, {
      commandTimeout: timeoutMs,
      connectTimeout: timeoutMs,
      // Fail a command at once while the server is away (Segments serves from its buffers and
      // asks again later) rather than queueing it until a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    }).catch((error: unknown) => {
      // A bad URL or database is the caller's (typed already); anything else is a store that
      // cannot be reached, said as the one error segment callers act on.
      if (error instanceof IdsError) throw error;
      throw new StoreUnavailableError(
        'redis',
        'segment',
        `could not reach the Redis segment store: ${errorText(error)}`,
        { cause: error },
      );
    });
    redis = own as unknown as RedisClient;
    close = async () => {
      own.disconnect();
    };
  }
  return {
    kind: 'redis',
    ...checkedOperations({
      async create(tag, after) {
        const where = `tag ${JSON.stringify(tag)} in redis key ${prefix}${tag}`;
        const answer = await evalAnswered(redis, where, CREATE, prefix + tag, after.toString());
        if (Array.isArray(answer)) throw tagExists(where, storedMaxId(answer[0], where), after);
      },
      async take(tag, step) {
        const where = `tag ${JSON.stringify(tag)} in redis key ${prefix}${tag}`;
        let value: unknown;
        try {
          value = await evalAnswered(redis, where, ALLOCATE, prefix + tag, step);
        } catch (error) {
          const reason = errorText(error);
          if (!(error instanceof StoreUnavailableError) && /not an integer|overflow/i.test(reason)) {
            throw new StoreCorruptError(
              `${where}: expected an integer from 0 with room for the step; Redis refused: ${reason}`,
              { cause: error },
            );
          }
          throw error;
        }
        if (value === null) {
          throw new UnknownTagError(
            `${where}: no such key. Never created, or Redis lost its data (restarted without persistence): create it once, above the highest ID it ever issued (createTag, ids segment create-tag)`,
          );
        }
        return rangeEndingAt(storedMaxId(value, where), step, where);
      },
    }),
    close,
  };
}
