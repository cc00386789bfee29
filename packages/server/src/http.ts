// The HTTP layer on node:http: a route table, JSON errors with stable codes, bearer auth, a
// per-client rate limit, request size and time bounds, and latency metrics. See the README for
// why node:http and not a framework.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { IdsError } from '@ids/engine';
import { HttpError, quote } from './errors.js';
import type { RequestEvent } from './events.js';
import { refuseIdempotencyKey } from './idempotency.js';
import type { ServerMetrics } from './metrics.js';
import { type MatchedRoute, type RouteReply, type RouteRequest, Router, type ServerRoute } from './router.js';

const JSON_TYPE = 'application/json; charset=utf-8';
/** The query of a request without one. */
const NO_QUERY: ReadonlyMap<string, string> = new Map();
/** What a HEAD on a route that issues IDs is answered: GET's headers, without the IDs. */
const ISSUING_HEAD: RouteReply = { headers: { 'content-type': JSON_TYPE } };

/** How the HTTP layer guards the routes. */
export interface HttpGuards {
  /** The bearer token required on routes with `auth` (default true), or undefined for none. */
  readonly token: string | undefined;
  /** Requests per second per client address, with a burst of the same size; undefined for none. */
  readonly rateLimit: number | undefined;
  /** The largest request body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** The time the rate limit counts in (ms; injected in tests). */
  readonly now: () => number;
  /** Unexpected failures (answered 500 without detail). */
  readonly onError: (error: unknown) => void;
  /** The access log: each request once answered; undefined for none (nothing is built then). */
  readonly accessLog?: ((event: RequestEvent) => void) | undefined;
}

function send(
  res: ServerResponse,
  status: number,
  reply: RouteReply | undefined,
  extra?: Record<string, string>,
) {
  if (
    reply?.json !== undefined &&
    reply.text === undefined &&
    reply.headers === undefined &&
    extra === undefined
  ) {
    // GET /id and most replies: the headers in one literal, as node:http alone would write them.
    const body = JSON.stringify(reply.json);
    res.writeHead(status, {
      'cache-control': 'no-store',
      'content-type': JSON_TYPE,
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  const headers: Record<string, string> =
    reply?.headers === undefined && extra === undefined
      ? { 'cache-control': 'no-store' }
      : { 'cache-control': 'no-store', ...reply?.headers, ...extra };
  let body: string | undefined;
  if (reply?.text !== undefined) {
    body = reply.text;
    headers['content-type'] = reply.contentType ?? 'text/plain; charset=utf-8';
  } else if (reply?.json !== undefined) {
    body = JSON.stringify(reply.json);
    headers['content-type'] = JSON_TYPE;
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(status, headers);
  res.end(body);
}

function errorReply(error: HttpError): RouteReply {
  return { json: { error: { code: error.code, message: error.message } }, headers: error.headers };
}

/** A failure as the HTTP error it answers with. */
function toHttpError(error: unknown, onError: (error: unknown) => void): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof IdsError) {
    // Bad input is the client's; anything else a generator or store raises is the service's
    // state (clock behind, claim lost, closed, Redis down), which another instance can serve.
    if (error.code === 'ERR_IDS_INVALID_ID' || error.code === 'ERR_IDS_INVALID_ARGUMENT') {
      return new HttpError(400, error.code, error.message);
    }
    const retry = error.code === 'ERR_IDS_CLOCK_BACKWARDS' || error.code === 'ERR_IDS_MACHINE_ID_LOST';
    return new HttpError(503, error.code, error.message, retry ? { 'retry-after': '1' } : {});
  }
  onError(error);
  return new HttpError(500, 'ERR_INTERNAL', 'internal error');
}

/** Compares tokens in constant time (their digests have one length). */
function sameToken(given: string, expected: Buffer): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), expected);
}

/** Token buckets per client address. */
class RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    readonly perSecond: number,
    readonly now: () => number,
  ) {}

  /** ms until the client may send again, or 0 when this request is allowed (and counted). */
  take(client: string): number {
    const now = this.now();
    let bucket = this.#buckets.get(client);
    if (!bucket) {
      // Bounded memory: forget every idle client when too many have been seen.
      if (this.#buckets.size >= 10_000) this.#buckets.clear();
      bucket = { tokens: this.perSecond, at: now };
      this.#buckets.set(client, bucket);
    }
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((now - bucket.at) * this.perSecond) / 1000);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) * 1000) / this.perSecond);
  }
}

/**
 * Whether the request says it has a body (Content-Length or Transfer-Encoding). Read from
 * `rawHeaders`: `req.headers` is an object node:http builds on first use, which a request that
 * needs no other header would pay for only to find these two absent.
 */
function announcesBody(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== 14 && name.length !== 17) continue;
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'transfer-encoding') return true;
  }
  return false;
}

/**
 * Reads and drops a request body up to `limit` bytes, resolving with its SHA-256 (hex) for an
 * Idempotency-Key's fingerprint; rejects with a 413 past it. Undefined for a request without a
 * body (every GET in practice): nothing to wait for, not even a microtask.
 */
function drainBody(req: IncomingMessage, limit: number): Promise<string> | undefined {
  // Nothing to read: node:http discards the request's end itself once the response is sent.
  if (!announcesBody(req)) return undefined;
  const length = req.headers['content-length'];
  const tooLarge = () =>
    new HttpError(
      413,
      'ERR_PAYLOAD_TOO_LARGE',
      `expected a request body of at most ${limit} bytes (these routes take none)`,
    );
  if (length !== undefined && Number(length) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    let size = 0;
    const hash = createHash('sha256');
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge());
      }
    });
    req.on('end', () => resolve(hash.digest('hex')));
    req.on('error', reject);
  });
}

/**
 * The request handler over the routes. Every request ends in a response: a route's answer, or a
 * JSON error with a stable code; nothing a client sends can throw out of it. A route that answers
 * at once is answered in the request's own turn, with no promise made, as node:http alone would.
 */
export function createHandler(routes: readonly ServerRoute[], metrics: ServerMetrics, guards: HttpGuards) {
  const router = new Router(routes);
  const expected =
    guards.token === undefined ? undefined : createHash('sha256').update(guards.token).digest();
  const limiter = guards.rateLimit === undefined ? undefined : new RateLimiter(guards.rateLimit, guards.now);
  const accessLog = guards.accessLog;
  const latency = metrics.httpSeconds;
  const inFlight = metrics.inFlight;

  function parseQuery(matched: MatchedRoute, search: string): ReadonlyMap<string, string> {
    if (search === '') return NO_QUERY;
    const { route, queryNames } = matched;
    const query = new Map<string, string>();
    for (const [name, value] of new URLSearchParams(search)) {
      if (!queryNames.includes(name)) {
        throw new HttpError(
          400,
          'ERR_UNKNOWN_PARAMETER',
          `${route.path} takes ${queryNames.length ? queryNames.join(', ') : 'no query parameters'}, received ${quote(name)}`,
        );
      }
      if (query.has(name)) {
        throw new HttpError(
          400,
          'ERR_REPEATED_PARAMETER',
          `expected ${name} once, received it more than once`,
        );
      }
      query.set(name, value);
    }
    return query;
  }

  function authorize(req: IncomingMessage): void {
    if (expected === undefined) return;
    const header = req.headers.authorization;
    const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    if (token === undefined) {
      throw new HttpError(
        401,
        'ERR_UNAUTHORIZED',
        'expected an Authorization: Bearer <token> header, received none',
        {
          'www-authenticate': 'Bearer',
        },
      );
    }
    if (!sameToken(token, expected)) {
      throw new HttpError(401, 'ERR_UNAUTHORIZED', 'the bearer token is not the one this server expects', {
        'www-authenticate': 'Bearer error="invalid_token"',
      });
    }
  }

  // The functions below take the request's parts as arguments rather than one object or a
  // closure per request: GET /id then allocates nothing of its own but its reply.

  /** Counts the request answered with `status`, and logs it when the access log is on. */
  function finish(req: IncomingMessage, t0: number, method: string, label: string, status: number): void {
    inFlight.count--;
    const ms = performance.now() - t0;
    latency.series(label, method, status).observe(ms / 1000);
    if (accessLog !== undefined) {
      try {
        accessLog({
          kind: 'request',
          method,
          url: (req.url ?? '/').slice(0, 200),
          route: label,
          status,
          durationMs: ms,
          remoteAddress: req.socket.remoteAddress,
        });
      } catch (error) {
        // A listener that throws must not become an unhandled rejection of the request.
        guards.onError(error);
      }
    }
  }

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    method: string,
    label: string,
    reply: RouteReply,
  ): void {
    const status = reply.status ?? 200;
    try {
      send(res, status, reply);
    } catch (error) {
      fail(req, res, t0, method, label, error);
      return;
    }
    finish(req, t0, method, label, status);
  }

  function fail(
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    method: string,
    label: string,
    error: unknown,
  ): void {
    const failure = toHttpError(error, guards.onError);
    const status = failure.status;
    if (res.headersSent) res.destroy();
    // A body too large is not read: close the connection rather than read it to keep it alive.
    else send(res, status, errorReply(failure), status === 413 ? { connection: 'close' } : undefined);
    finish(req, t0, method, label, status);
  }

  /** Runs the route once the request (and its body, if any) is in. */
  function run(res: ServerResponse, t0: number, route: ServerRoute, request: RouteRequest): void {
    const req = request.req;
    const method = req.method ?? 'GET';
    const label = route.path;
    // A HEAD changes nothing: on a route that issues IDs it runs GET's checks, not GET.
    const head = method === 'HEAD' && route.checkHead !== undefined;
    let result: RouteReply | Promise<RouteReply> | void | Promise<void>;
    try {
      result = head ? route.checkHead?.(request) : route.handle(request);
    } catch (error) {
      fail(req, res, t0, method, label, error);
      return;
    }
    if (typeof (result as Partial<PromiseLike<unknown>> | undefined)?.then === 'function') {
      (result as PromiseLike<RouteReply | undefined>).then(
        (reply) => answer(req, res, t0, method, label, head ? ISSUING_HEAD : (reply as RouteReply)),
        (error: unknown) => fail(req, res, t0, method, label, error),
      );
    } else answer(req, res, t0, method, label, head ? ISSUING_HEAD : (result as RouteReply));
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    inFlight.count++;
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const mark = target.indexOf('?');
    let label = 'unmatched';
    try {
      const { matched, params } = router.match(method, mark < 0 ? target : target.slice(0, mark));
      const route = matched.route;
      label = route.path;
      if (route.auth !== false) authorize(req);
      if (limiter && route.limited !== false) {
        const waitMs = limiter.take(req.socket.remoteAddress ?? '');
        if (waitMs > 0) {
          throw new HttpError(
            429,
            'ERR_RATE_LIMITED',
            `expected at most ${limiter.perSecond} requests per second from one client; retry in ${waitMs} ms`,
            { 'retry-after': String(Math.ceil(waitMs / 1000)) },
          );
        }
      }
      const query = parseQuery(matched, mark < 0 ? '' : target.slice(mark + 1));
      refuseIdempotencyKey(route, req);
      const request: RouteRequest = { req, params, query };
      const draining = drainBody(req, guards.maxBodyBytes);
      if (draining === undefined) run(res, t0, route, request);
      else {
        draining.then(
          (bodyHash) => run(res, t0, route, { ...request, bodyHash }),
          (error: unknown) => fail(req, res, t0, method, route.path, error),
        );
      }
    } catch (error) {
      fail(req, res, t0, method, label, error);
    }
  };
}

/**
 * Answers what the HTTP parser rejects (garbage, oversized headers, a request too slow to
 * arrive) with a JSON error instead of Node's bare status line, then closes the connection.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  // Bytes after a request that said `Connection: close`: its response, which closes the
  // connection once sent, is the answer; nothing else may be written before it.
  if (error.code === 'HPE_CLOSED_CONNECTION') return;
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? '431 Request Header Fields Too Large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : '400 Bad Request';
  const code = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'ERR_REQUEST_TIMEOUT' : 'ERR_BAD_REQUEST';
  const message =
    code === 'ERR_REQUEST_TIMEOUT'
      ? 'the request did not arrive in time'
      : `malformed HTTP request (${error.code ?? error.message})`;
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
