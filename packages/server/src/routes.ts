// The server's own routes over the machine pool, the token store and the metrics: each declared
// once, with what the OpenAPI document says of it.
import {
  decodeId,
  decomposeIn,
  ENCODING_NAMES,
  type EncodingName,
  encodeId,
  type Layout,
  layoutLimits,
  toTimeIn,
} from '@ids/engine';
import { layoutShape } from '@ids/engine/internal';
import { HttpError, quote } from './errors.js';
import { IDEMPOTENCY_EXPIRY_MS, type IdempotencyStore, idempotencyKeyOf } from './idempotency.js';
import type { ServerMetrics } from './metrics.js';
import { error, json, ref } from './openapi.js';
import type { MachinePool } from './pool.js';
import type { RouteParameter, RouteReply, ServerRoute } from './router.js';
import type { TokenStore } from './tokens.js';

/** What the routes work from. */
export interface ServiceParts {
  readonly pool: MachinePool;
  readonly metrics: ServerMetrics;
  readonly maxCount: number;
  readonly tokens: TokenStore | undefined;
  /** Idempotency-Key on GET /ids, when the server has a Redis and @ids/lock. */
  readonly idempotency: IdempotencyStore | undefined;
  /** Why a request with Idempotency-Key is refused when `idempotency` is undefined: what to configure. */
  readonly idempotencyUnavailable: string;
  readonly tokenTtlSeconds: number;
  readonly openapi: () => Record<string, unknown>;
  readonly shuttingDown: () => boolean;
  /** The time tokens' expiry is computed from (Unix ms). */
  readonly now: () => number;
}

function formatOf(query: ReadonlyMap<string, string>): EncodingName {
  const value = query.get('format');
  if (value === undefined) return 'decimal';
  if (!(ENCODING_NAMES as readonly string[]).includes(value)) {
    throw new HttpError(
      400,
      'ERR_INVALID_FORMAT',
      `expected format= one of ${ENCODING_NAMES.join(', ')}, received ${quote(value)}`,
    );
  }
  return value as EncodingName;
}

const formatParameter: RouteParameter = {
  name: 'format',
  in: 'query',
  description: 'The text encoding of IDs (default decimal).',
  schema: { type: 'string', enum: [...ENCODING_NAMES] },
};

const idempotencyParameter: RouteParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  description: `Makes a retry safe: the first request with a key takes the IDs, a retry with the same key and request gets the same IDs for ${IDEMPOTENCY_EXPIRY_MS / 3_600_000} hours. Needs the server's Redis (--redis, IDS_REDIS_URL).`,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** The `count` parameter, 1 to maxCount. */
export function countParameter(maxCount: number): RouteParameter {
  return {
    name: 'count',
    in: 'query',
    required: true,
    schema: { type: 'integer', minimum: 1, maximum: maxCount },
  };
}

/** `count` of the query, from 1 to maxCount. @throws HttpError 400 ERR_INVALID_COUNT. */
export function countOf(query: ReadonlyMap<string, string>, maxCount: number): number {
  const raw = query.get('count');
  const expected = `expected count=N with N an integer from 1 to ${maxCount}`;
  if (raw === undefined) throw new HttpError(400, 'ERR_INVALID_COUNT', `${expected}, received no count`);
  const count = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(count >= 1 && count <= maxCount)) {
    throw new HttpError(400, 'ERR_INVALID_COUNT', `${expected}, received ${quote(raw)}`);
  }
  return count;
}

function encodeAll(ids: bigint[], format: EncodingName): string[] {
  const out = new Array<string>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as bigint;
    out[i] = format === 'decimal' ? id.toString() : encodeId(id, format);
  }
  return out;
}

/** The reply of GET /id. */
function idReply(id: bigint, format: EncodingName): RouteReply {
  return { json: { id: format === 'decimal' ? id.toString() : encodeId(id, format) } };
}

/** The layout and what this service can issue with it. */
export function describeLayout(layout: Layout, machines: number, maxCount: number) {
  const limits = layoutLimits(layout);
  return {
    ...layoutShape(layout),
    epoch: new Date(layout.epochMs).toISOString(),
    maxId: layout.maxId.toString(),
    limits: {
      lifetimeYears: limits.lifetimeYears,
      endsAt: limits.endsAt.toISOString(),
      idsPerSecond: limits.idsPerSecond,
      machines: limits.machines,
      unsafeNumberFrom: limits.unsafeNumberFrom?.toISOString() ?? null,
    },
    service: { machines, idsPerSecond: machines * limits.idsPerSecond, maxCount },
    formats: [...ENCODING_NAMES],
  };
}

/** The routes of the server itself, in the order they are matched. */
export function serviceRoutes(parts: ServiceParts): ServerRoute[] {
  const { pool, metrics, maxCount } = parts;
  const layout = pool.layout;
  const readiness = () => ({
    ready: pool.ready && !parts.shuttingDown(),
    shuttingDown: parts.shuttingDown(),
    machines: pool.slots.map((slot) => ({
      slot: slot.index,
      machineId: slot.generator.machine,
      state: slot.state,
    })),
  });
  const routes: ServerRoute[] = [
    {
      method: 'GET',
      path: '/id',
      operationId: 'getId',
      summary: 'One new ID.',
      parameters: [formatParameter],
      responses: {
        '200': { description: 'A new ID.', content: json(ref('Id')) },
        '400': error('Bad query.'),
        '503': error('No generator can issue now (claim fenced, clock behind, shutting down).'),
      },
      issues: true,
      checkHead(request) {
        formatOf(request.query);
      },
      handle(request) {
        const format = formatOf(request.query);
        // Answered at once when the generator can issue now, the usual case.
        const id = pool.issueOne();
        return typeof id === 'bigint' ? idReply(id, format) : id.then((later) => idReply(later, format));
      },
    },
    {
      method: 'GET',
      path: '/ids',
      operationId: 'getIds',
      summary: 'N new IDs from one generator, increasing.',
      parameters: [countParameter(maxCount), formatParameter, idempotencyParameter],
      issues: true,
      responses: {
        '200': {
          description:
            'The IDs, increasing; with an Idempotency-Key already answered, the same IDs again (and `Idempotent-Replayed: true`).',
          content: json(ref('Ids')),
        },
        '400': error('Bad count or format; a malformed Idempotency-Key, or one on a server without a Redis.'),
        '409': error('A request with this Idempotency-Key is still running.'),
        '422': error('This Idempotency-Key was used with another request (method, path, query or body).'),
        '503': error(
          "No generator can issue now, the Redis of the Idempotency-Key records is unavailable, or the key's batch lost its lock (the server was paused past the lease) and stored nothing.",
        ),
      },
      checkHead({ query }) {
        countOf(query, maxCount);
        formatOf(query);
      },
      async handle(request) {
        const { query } = request;
        const count = countOf(query, maxCount);
        const format = formatOf(query);
        const key = idempotencyKeyOf(request, parts.idempotency, parts.idempotencyUnavailable);
        if (key === undefined) return { json: { ids: encodeAll(await pool.issue(count), format) } };
        return (parts.idempotency as IdempotencyStore).run(request, key, async (signal) => ({
          ids: encodeAll(await pool.issue(count, signal), format),
        }));
      },
    },
    {
      method: 'GET',
      path: '/ids/{id}',
      operationId: 'decomposeId',
      summary: "An ID's fields under the server's layout.",
      parameters: [
        { name: 'id', in: 'path', schema: { type: 'string' } },
        { ...formatParameter, description: 'The encoding the ID is written in (default decimal).' },
      ],
      responses: {
        '200': { description: 'Its fields.', content: json(ref('Decomposed')) },
        '400': error('Not an ID of this layout in that encoding.'),
      },
      handle({ params, query }) {
        const format = formatOf(query);
        const text = params.id as string;
        const id = decodeId(text, format);
        const parts = decomposeIn(layout, id);
        return {
          json: {
            id: format === 'decimal' ? id.toString() : encodeId(id, format),
            decimal: id.toString(),
            layout: layout.name,
            time: toTimeIn(layout, id).toISOString(),
            elapsedMs: parts.time * layout.timeUnitMs,
            sequence: parts.sequence,
            machine: parts.machine,
            ...(parts.parts ? { parts: parts.parts } : {}),
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/layout',
      operationId: 'getLayout',
      summary: 'The layout, its limits and the service capacity.',
      responses: { '200': { description: 'The layout.', content: json(ref('Layout')) } },
      handle: () => ({ json: describeLayout(layout, pool.slots.length, maxCount) }),
    },
    {
      method: 'GET',
      path: '/health/live',
      operationId: 'live',
      summary: 'The process answers.',
      responses: { '200': { description: 'Alive.', content: json(ref('Live')) } },
      auth: false,
      limited: false,
      handle: () => ({ json: { status: 'live' } }),
    },
    {
      method: 'GET',
      path: '/health/ready',
      operationId: 'ready',
      summary: 'Every generator open, every claim held and not fenced, not shutting down.',
      responses: {
        '200': { description: 'Ready.', content: json(ref('Ready')) },
        '503': { description: 'Not ready.', content: json(ref('Ready')) },
      },
      auth: false,
      limited: false,
      handle() {
        const body = readiness();
        metrics.ready.set(body.ready ? 1 : 0);
        return { status: body.ready ? 200 : 503, json: body };
      },
    },
    {
      method: 'GET',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics.',
      responses: {
        '200': {
          description: 'Text exposition format.',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
      limited: false,
      async handle() {
        metrics.ready.set(pool.ready && !parts.shuttingDown() ? 1 : 0);
        return { text: await metrics.registry.metrics(), contentType: metrics.registry.contentType };
      },
    },
    {
      method: 'GET',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This document.',
      responses: { '200': { description: 'OpenAPI 3.1.', content: json({ type: 'object' }) } },
      auth: false,
      handle: () => ({ json: parts.openapi() }),
    },
  ];
  const tokens = parts.tokens;
  if (tokens) routes.push(...tokenRoutes(parts, tokens));
  return routes;
}

const MAX_TTL_SECONDS = 604_800;

function tokenRoutes(parts: ServiceParts, tokens: TokenStore): ServerRoute[] {
  return [
    {
      method: 'POST',
      path: '/tokens',
      operationId: 'issueToken',
      summary: 'A new idempotency token (an ID), stored in Redis with a TTL.',
      issues: true,
      parameters: [
        {
          name: 'ttl',
          in: 'query',
          description: 'Seconds the token lives.',
          schema: { type: 'integer', minimum: 1, maximum: MAX_TTL_SECONDS },
        },
      ],
      responses: {
        '201': { description: 'The token.', content: json(ref('Token')) },
        '400': error('Bad ttl.'),
        '503': error(
          'Redis or the generators unavailable (ERR_IDS_STORE_UNAVAILABLE for Redis), Redis refusing, or the new token already in Redis (ERR_TOKEN_EXISTS).',
        ),
      },
      async handle({ query }): Promise<RouteReply> {
        const raw = query.get('ttl');
        const ttl = raw === undefined ? parts.tokenTtlSeconds : /^[0-9]{1,6}$/.test(raw) ? Number(raw) : 0;
        if (!(ttl >= 1 && ttl <= MAX_TTL_SECONDS)) {
          throw new HttpError(
            400,
            'ERR_INVALID_TTL',
            `expected ttl= an integer of seconds from 1 to ${MAX_TTL_SECONDS}, received ${quote(raw ?? '')}`,
          );
        }
        const [id] = await parts.pool.issue(1);
        const token = String(id);
        await tokens.issue(token, ttl);
        return {
          status: 201,
          json: { token, ttlSeconds: ttl, expiresAt: new Date(parts.now() + ttl * 1000).toISOString() },
        };
      },
    },
    {
      method: 'DELETE',
      path: '/tokens/{token}',
      operationId: 'consumeToken',
      summary: 'Consumes a token atomically: the first call wins.',
      responses: {
        '204': { description: 'Consumed now (the first consumer).' },
        '400': error('Not a token.'),
        '404': error('Unknown or expired token.'),
        '409': error('Already consumed.'),
        '503': error('Redis unavailable (ERR_IDS_STORE_UNAVAILABLE) or refusing.'),
      },
      async handle({ params }): Promise<RouteReply> {
        const token = params.token as string;
        if (!/^[1-9][0-9]{0,18}$/.test(token)) {
          throw new HttpError(
            400,
            'ERR_INVALID_TOKEN',
            `expected a token as issued by POST /tokens (a decimal ID), received ${quote(token)}`,
          );
        }
        const outcome = await tokens.consume(token);
        if (outcome === 'consumed') return { status: 204 };
        if (outcome === 'used') {
          throw new HttpError(409, 'ERR_TOKEN_USED', `token ${token} was already consumed`);
        }
        throw new HttpError(404, 'ERR_TOKEN_UNKNOWN', `token ${token} is unknown or expired`);
      },
    },
  ];
}
