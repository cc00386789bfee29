// Idempotency-Key on GET /ids: a client that retries a batch gets the IDs of its first try, not
// new ones. The scheme is @ids/lock's (a lock per key while the batch runs, the response stored
// on completion); this file only loads it, on the server's Redis, and says its outcomes in the
// server's error shape. @ids/lock is an optional peer: loaded only when a Redis is configured.
import { IdsError } from '@ids/engine';
import { importOptional } from '@ids/engine/internal';
import { HttpError, TokenStoreError } from './errors.js';
import type { RouteReply, RouteRequest } from './router.js';

/** The header, as the IETF draft names it. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** How long a completed batch is replayed for its key, in ms: 24 hours. */
export const IDEMPOTENCY_EXPIRY_MS = 86_400_000;

/**
 * The lease of a key's "running" lock, in ms. It is kept alive while the batch runs, so it does
 * not bound the work: it is how long a key stays 409 after a server died mid-batch, and how long
 * the first key after Redis started empty waits before running (@ids/lock's quarantine for a
 * Redis that may have forgotten its holders).
 */
export const IDEMPOTENCY_LOCK_TTL_MS = 5000;

const JSON_TYPE = 'application/json; charset=utf-8';

function invalidKey(received: string): HttpError {
  return new HttpError(
    400,
    'ERR_INVALID_IDEMPOTENCY_KEY',
    `expected an Idempotency-Key of 1 to 255 printable characters, received ${received}`,
  );
}

/** Runs a request's work once per Idempotency-Key. */
export interface IdempotencyStore {
  /**
   * Runs `work` for a request carrying the header, or answers as the first request with the key
   * did: the stored reply (with `Idempotent-Replayed: true`), or an HttpError 409 (still
   * running), 422 (the key was used for another request), 400 (a malformed key).
   */
  run(request: RouteRequest, key: string, work: () => Promise<unknown>): Promise<RouteReply>;
  /** Closes its connections. */
  close(): Promise<void>;
}

/**
 * A request's fingerprint: method, path, query (in a fixed order, so that the same parameters
 * in another order are the same request) and the body's hash.
 */
function fingerprintOf(print: (...parts: string[]) => string, request: RouteRequest): string {
  const url = request.req.url ?? '/';
  const mark = url.indexOf('?');
  const query = [...request.query].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return print(
    request.req.method ?? 'GET',
    mark < 0 ? url : url.slice(0, mark),
    JSON.stringify(query),
    request.bodyHash ?? '',
  );
}

/**
 * The Idempotency-Key header of a request: undefined when absent.
 * @throws HttpError 400 ERR_IDEMPOTENCY_NOT_CONFIGURED when it is present and the server has no
 * store for it (`unavailable` says why): a key silently ignored would let a retry take new IDs.
 */
export function idempotencyKeyOf(
  request: RouteRequest,
  store: IdempotencyStore | undefined,
  unavailable: string,
): string | undefined {
  const key = request.req.headers[IDEMPOTENCY_HEADER];
  if (key === undefined) return undefined;
  if (store === undefined) {
    throw new HttpError(
      400,
      'ERR_IDEMPOTENCY_NOT_CONFIGURED',
      `expected no Idempotency-Key header on this server, received one: ${unavailable}`,
    );
  }
  return key as string;
}

/**
 * The idempotency store on the Redis at `url`: one client for the records, and @ids/lock's Redis
 * locks (two more connections).
 * @throws MissingPackageError when @ids/lock (or the Redis client) is not installed.
 */
export async function redisIdempotency(url: string): Promise<IdempotencyStore> {
  const use = 'Idempotency-Key on GET /ids';
  const [{ idempotencyKeys, fingerprint }, { redisLocks }, { openRedisClient }] = await Promise.all([
    importOptional('@ids/lock', () => import('@ids/lock'), use),
    importOptional('@ids/lock', () => import('@ids/lock/redis'), use),
    importOptional('@ids/machine-redis', () => import('@ids/machine-redis'), use, ['ioredis']),
  ]);
  const records = await openRedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 100, 2000),
  });
  let locks: Awaited<ReturnType<typeof redisLocks>>;
  try {
    locks = await redisLocks({ url });
  } catch (error) {
    records.disconnect();
    throw error;
  }
  const keys = idempotencyKeys(records, locks, {
    prefix: 'ids:idempotency:server',
    expiryMs: IDEMPOTENCY_EXPIRY_MS,
    ttlMs: IDEMPOTENCY_LOCK_TTL_MS,
    required: false,
  });
  return {
    async run(request, key, work) {
      // An empty key would run unguarded (the scheme takes it for "no key"): refused instead.
      if (key === '') throw invalidKey('an empty one');
      let answer: Awaited<ReturnType<typeof keys.run>>;
      try {
        answer = await keys.run(key, fingerprintOf(fingerprint, request), async () => ({
          status: 200,
          body: JSON.stringify(await work()),
        }));
      } catch (error) {
        // The work's own failures (a generator's IdsError) pass as they are; Redis's are a 503.
        if (error instanceof IdsError || error instanceof HttpError) throw error;
        throw new TokenStoreError(`the idempotency store (Redis) failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      switch (answer.outcome) {
        case 'executed':
          return { status: answer.status, text: answer.body, contentType: JSON_TYPE };
        case 'replayed':
          return {
            status: answer.status,
            text: answer.body,
            contentType: JSON_TYPE,
            headers: { 'idempotent-replayed': 'true' },
          };
        case 'in-progress':
          throw new HttpError(
            409,
            'ERR_IDEMPOTENCY_IN_PROGRESS',
            'a request with this Idempotency-Key is still running: retry once it has been answered',
            { 'retry-after': '1' },
          );
        case 'mismatch':
          throw new HttpError(
            422,
            'ERR_IDEMPOTENCY_KEY_REUSED',
            'expected the request this Idempotency-Key was first used with (same method, path, query and body), received a different one',
          );
        default:
          throw invalidKey(`${key.length} characters`);
      }
    },
    async close() {
      await locks.close();
      records.disconnect();
    },
  };
}
