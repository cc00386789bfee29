// Idempotency-Key on GET /ids: a client that retries a batch gets the IDs of its first try, not
// new ones. The scheme is @ids/lock's (a lock per key while the batch runs, the response stored
// on completion under the lock's fence); this file only loads it, on the server's Redis, and says
// its outcomes in the server's error shape. @ids/lock is an optional peer: loaded only when a
// Redis is configured.
//
// A server paused mid-batch past the lock's lease (issue 34: SIGSTOP 6 s on a 5 s lease) must not
// answer with its own IDs once a retry on another server took the key: the batch stops when the
// lock's signal aborts, and the answer is sent only when @ids/lock reports `executed`, which it
// does only when the record write under the lock's fence was accepted. Otherwise the answer is
// the key's record (the other server's IDs, replayed) or 409.
import type { IncomingMessage } from 'node:http';
import { IdsError } from '@ids/engine';
import { importOptional } from '@ids/engine/internal';
import { HttpError } from './errors.js';
import {
  IDEMPOTENCY_HEADER,
  type RouteReply,
  type RouteRequest,
  refusesIdempotencyKey,
  type ServerRoute,
} from './router.js';

/** The header, as the IETF draft names it. */

/** How long a completed batch is replayed for its key, in ms: 24 hours. */
export const IDEMPOTENCY_EXPIRY_MS = 86_400_000;

/**
 * The default lease of a key's "running" lock, in ms (`--idempotency-lock-ttl`). It is kept
 * alive while the batch runs, so it does not bound the work: it is how long a key stays 409
 * after a server died mid-batch, how long a server may be paused before a retry elsewhere takes
 * the key (its own batch then stops and is never answered), and how long the first key after
 * Redis started empty waits before running (@ids/lock's quarantine for a Redis that may have
 * forgotten its holders).
 */
export const IDEMPOTENCY_LOCK_TTL_MS = 5000;

const JSON_TYPE = 'application/json; charset=utf-8';

/** The batch stopped because its lock could no longer be trusted (`reason`: the lock's). */
function lockLost(reason: unknown): HttpError {
  return new HttpError(
    503,
    'ERR_IDEMPOTENCY_LOCK_LOST',
    `expected this Idempotency-Key's lock to be held until its IDs were stored, received ${(reason as Error)?.message ?? String(reason)}; its batch stopped and nothing was stored: retry`,
    { 'retry-after': '1' },
  );
}

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
   * running), 422 (the key was used for another request), 400 (a malformed key), 503
   * ERR_IDEMPOTENCY_LOCK_LOST (the batch stopped because its lock was lost, and nothing was
   * stored). `work` gets the lock's signal and must stop when it aborts.
   */
  run(
    request: RouteRequest,
    key: string,
    work: (signal: AbortSignal) => Promise<unknown>,
  ): Promise<RouteReply>;
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
 * Refuses an Idempotency-Key header on a route that issues without honouring one (`issues`
 * without the header among its parameters: GET /id, POST /tokens, the segment routes): a retry
 * with the key would take new values, which is what the key is sent to prevent.
 * @throws HttpError 400 ERR_IDEMPOTENCY_NOT_SUPPORTED when the header is present.
 */
export function refuseIdempotencyKey(route: ServerRoute, req: IncomingMessage): void {
  if (req.headers[IDEMPOTENCY_HEADER] === undefined || !refusesIdempotencyKey(route)) return;
  throw new HttpError(
    400,
    'ERR_IDEMPOTENCY_NOT_SUPPORTED',
    `expected no Idempotency-Key header on ${route.method} ${route.path}, received one: only GET /ids honours it (a retry here would take new values whatever the key); send GET /ids with the key for IDs`,
  );
}

/**
 * The idempotency store on the Redis at `url`: one client for the records, and @ids/lock's Redis
 * locks (two more connections); `lockTtlMs` is the lease of a key's lock.
 * @throws MissingPackageError when @ids/lock (or the Redis client) is not installed.
 */
export async function redisIdempotency(
  url: string,
  lockTtlMs: number = IDEMPOTENCY_LOCK_TTL_MS,
): Promise<IdempotencyStore> {
  const use = 'Idempotency-Key on GET /ids';
  const [{ idempotencyKeys, fingerprint }, { redisLocks }, { openRedisClient, redisFailure }] =
    await Promise.all([
      importOptional('@ids/lock', () => import('@ids/lock'), use),
      importOptional('@ids/lock', () => import('@ids/lock/redis'), use),
      importOptional('@ids/machine-redis', () => import('@ids/machine-redis/internal'), use, ['ioredis']),
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
    ttlMs: lockTtlMs,
    required: false,
  });
  return {
    async run(request, key, work) {
      // An empty key would run unguarded (the scheme takes it for "no key"): refused instead.
      if (key === '') throw invalidKey('an empty one');
      let answer: Awaited<ReturnType<typeof keys.run>>;
      try {
        answer = await keys.run(key, fingerprintOf(fingerprint, request), async (signal) => {
          try {
            return { status: 200, body: JSON.stringify(await work(signal)) };
          } catch (error) {
            throw signal.aborted ? lockLost(signal.reason) : error;
          }
        });
      } catch (error) {
        // The work's own failures (a generator's IdsError) pass as they are; Redis's are sorted
        // by machine-redis's rule (no answer: StoreUnavailableError), a 503 either way.
        if (error instanceof IdsError || error instanceof HttpError) throw error;
        throw redisFailure('Idempotency-Key records', error, `Redis at ${new URL(url).host}`, 'token');
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
