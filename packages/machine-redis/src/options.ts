import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import type { LeaseOptions } from '@ids/machine-lease';
import { type CheckedLeaseOptions, checkLeaseOptions, checkOptionsObject } from '@ids/machine-lease/internal';
import type { Cluster, RedisOptions as IoRedisOptions, Redis } from 'ioredis';
import { parseRedisUrl } from './url.js';

/** Where claims live when no prefix is given. */
export const DEFAULT_REDIS_PREFIX = 'ids:machine-id';
/** The local default Redis. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** How to reach Redis: a URL (and client options), or a client of your own. */
export interface RedisConnectionOptions {
  /**
   * `redis://[[user]:password@]host:port[/db]` or `rediss://...` (TLS). Default: the
   * `IDS_REDIS_URL` environment variable, else `redis://127.0.0.1:6379`. A malformed URL, or a
   * database that is not a number 0 or more, is InvalidArgumentError; a database the server does not
   * have is RedisDatabaseError; an unreachable server gives StoreUnavailableError within
   * `timeoutMs`.
   */
  readonly url?: string;
  /**
   * Any other ioredis options (`tls` with a CA, `username`, `password`, ...), merged over what
   * the URL says. Default: none. The connection settings that fencing rests on
   * (`enableOfflineQueue: false`, `maxRetriesPerRequest: 0`, `connectTimeout`) are set here
   * unless given.
   */
  readonly redisOptions?: IoRedisOptions;
  /**
   * An ioredis `Redis` or `Cluster` to use instead of making one (then `url` and
   * `redisOptions` must be absent). It is not closed on release. Default: a client of our
   * own, closed on release.
   */
  readonly client?: Redis | Cluster;
}

/** The options of redisMachineId (and the `auto` step): how to reach Redis and hold a claim there. */
export interface RedisLeaseOptions extends RedisConnectionOptions, LeaseOptions {
  /**
   * The key prefix P: claims are `{P}:<id>`, recorded times `{P}:time:<id>`, the index of live
   * claims `{P}:claims`. The braces are a Redis Cluster hash tag: every key of a fleet lives in
   * one slot, so each script touches one node. Default `ids:machine-id`; printable ASCII
   * without spaces or braces, 1 to 200 characters, not ending in `:`.
   */
  readonly prefix?: string;
}

/** Validated connection and lease settings. */
export interface CheckedRedisOptions extends CheckedLeaseOptions {
  /** The URL to dial (undefined with a client of the user's). */
  readonly url: string | undefined;
  /** The prefix, validated. */
  readonly prefix: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

const PREFIX = /^[\x21-\x7a\x7c\x7e]{1,200}$/;

/** A key prefix: printable ASCII, no spaces or braces (the hash tag), not ending in `:`. */
export function parsePrefix(value: unknown, option = 'prefix'): string {
  if (value === undefined) return DEFAULT_REDIS_PREFIX;
  if (typeof value !== 'string' || !PREFIX.test(value) || value.endsWith(':')) {
    throw new InvalidArgumentError(
      `expected a key prefix like ids:machine-id (1 to 200 printable ASCII characters, no spaces or braces, not ending in ':'), received ${received(value)}`,
      { option },
    );
  }
  return value;
}

/** Checks the client-or-URL choice; returns the URL to dial, or undefined for the user's client. */
export function connectionUrl(
  o: RedisConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (o.client !== undefined) {
    const c = o.client as unknown as Record<string, unknown>;
    if (!isRecord(o.client) || typeof c.eval !== 'function' || typeof c.quit !== 'function') {
      throw new InvalidArgumentError(`expected an ioredis Redis or Cluster, received ${received(o.client)}`, {
        option: 'client',
      });
    }
    if (o.url !== undefined || o.redisOptions !== undefined) {
      throw new InvalidArgumentError(
        'expected either a client or the options to make one (url, redisOptions), received both',
        { option: 'client' },
      );
    }
    return undefined;
  }
  if (o.redisOptions !== undefined && !isRecord(o.redisOptions)) {
    throw new InvalidArgumentError(
      `expected an object of ioredis options, received ${received(o.redisOptions)}`,
      { option: 'redisOptions' },
    );
  }
  if (o.url !== undefined) return parseRedisUrl(o.url, 'url').url;
  const fromEnv = env.IDS_REDIS_URL;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseRedisUrl(fromEnv, 'IDS_REDIS_URL').url;
  return DEFAULT_REDIS_URL;
}

/** Validates everything but the client's own options, in the order they are documented. */
export function checkRedisOptions(options: unknown): CheckedRedisOptions {
  const o = checkOptionsObject(options as RedisLeaseOptions | undefined);
  const url = connectionUrl(o);
  const prefix = parsePrefix(o.prefix);
  return { url, prefix, ...checkLeaseOptions(o) };
}
