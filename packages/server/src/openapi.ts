// The OpenAPI 3.1 description of the routes, served at /openapi.json. The tests validate it with
// an OpenAPI validator and check real responses against its schemas, so it cannot drift.
import { ENCODING_NAMES } from '@ids/engine';
import { inspectorOpenapiPath } from './page.js';
import type { ServerPlugin } from './router.js';

/** A JSON media type of `schema`. */
export const json = (schema: unknown) => ({ 'application/json': { schema } });
/** A reference to a schema of the document's components. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** An error response described by `description`. */
export const error = (description: string) => ({ description, content: json(ref('Error')) });

const formatParam = {
  name: 'format',
  in: 'query',
  required: false,
  description: 'The text encoding of IDs (default decimal).',
  schema: { type: 'string', enum: [...ENCODING_NAMES] },
};

const common = {
  '400': error('A bad query: an unknown or repeated parameter, or a bad value.'),
  '401': error('Missing or wrong bearer token (when the server requires one).'),
  '429': error('Over the per-client rate limit; see Retry-After.'),
};

/** What the document depends on. */
export interface OpenApiOptions {
  /** The package version. */
  readonly version: string;
  /** The package's license, an SPDX identifier. */
  readonly license: string;
  /** The bound on `count`. */
  readonly maxCount: number;
  /** Whether the token routes exist (Redis configured). */
  readonly tokens: boolean;
  /** Whether a bearer token is required. */
  readonly auth: boolean;
  /** Plugins' paths to merge. */
  readonly plugins: readonly ServerPlugin[];
}

/** The OpenAPI 3.1 document of a server with these options. */
export function openapiDocument(options: OpenApiOptions): Record<string, unknown> {
  const idString = {
    type: 'string',
    description: 'An ID in the requested encoding (decimal by default); never a JSON number.',
  };
  const paths: Record<string, unknown> = {
    '/': inspectorOpenapiPath,
    '/id': {
      get: {
        operationId: 'getId',
        summary: 'One new ID.',
        parameters: [formatParam],
        responses: {
          '200': { description: 'A new ID.', content: json(ref('Id')) },
          ...common,
          '400': error('Bad query.'),
          '503': error('No generator can issue now (claim fenced, clock behind, shutting down).'),
        },
      },
    },
    '/ids': {
      get: {
        operationId: 'getIds',
        summary: 'N new IDs from one generator, increasing.',
        parameters: [
          {
            name: 'count',
            in: 'query',
            required: true,
            schema: { type: 'integer', minimum: 1, maximum: options.maxCount },
          },
          formatParam,
        ],
        responses: {
          '200': { description: 'The IDs, increasing.', content: json(ref('Ids')) },
          ...common,
          '400': error('Bad count or format.'),
          '503': error('No generator can issue now.'),
        },
      },
    },
    '/ids/{id}': {
      get: {
        operationId: 'decomposeId',
        summary: "An ID's fields under the server's layout.",
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { ...formatParam, description: 'The encoding the ID is written in (default decimal).' },
        ],
        responses: {
          '200': { description: 'Its fields.', content: json(ref('Decomposed')) },
          ...common,
          '400': error('Not an ID of this layout in that encoding.'),
        },
      },
    },
    '/layout': {
      get: {
        operationId: 'getLayout',
        summary: 'The layout, its limits and the service capacity.',
        responses: { '200': { description: 'The layout.', content: json(ref('Layout')) }, ...common },
      },
    },
    '/health/live': {
      get: {
        operationId: 'live',
        summary: 'The process answers.',
        security: [],
        responses: { '200': { description: 'Alive.', content: json(ref('Live')) }, '400': common['400'] },
      },
    },
    '/health/ready': {
      get: {
        operationId: 'ready',
        summary: 'Every generator open, every claim held and not fenced, not shutting down.',
        security: [],
        responses: {
          '200': { description: 'Ready.', content: json(ref('Ready')) },
          '503': { description: 'Not ready.', content: json(ref('Ready')) },
          '400': common['400'],
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary: 'Prometheus metrics.',
        responses: {
          '200': {
            description: 'Text exposition format.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...common,
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This document.',
        security: [],
        responses: {
          '200': { description: 'OpenAPI 3.1.', content: json({ type: 'object' }) },
          '400': common['400'],
        },
      },
    },
  };
  if (options.tokens) {
    paths['/tokens'] = {
      post: {
        operationId: 'issueToken',
        summary: 'A new idempotency token (an ID), stored in Redis with a TTL.',
        parameters: [
          {
            name: 'ttl',
            in: 'query',
            required: false,
            description: 'Seconds the token lives.',
            schema: { type: 'integer', minimum: 1, maximum: 604800 },
          },
        ],
        responses: {
          '201': { description: 'The token.', content: json(ref('Token')) },
          ...common,
          '400': error('Bad ttl.'),
          '503': error('Redis or the generators unavailable.'),
        },
      },
    };
    paths['/tokens/{token}'] = {
      delete: {
        operationId: 'consumeToken',
        summary: 'Consumes a token atomically: the first call wins.',
        parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '204': { description: 'Consumed now (the first consumer).' },
          ...common,
          '400': error('Not a token.'),
          '404': error('Unknown or expired token.'),
          '409': error('Already consumed.'),
          '503': error('Redis unavailable.'),
        },
      },
    };
  }
  for (const plugin of options.plugins) Object.assign(paths, plugin.openapiPaths ?? {});
  return {
    openapi: '3.1.0',
    info: {
      title: '@ids/server',
      version: options.version,
      description:
        'Sonyflake and snowflake IDs over HTTP. IDs are strings. Errors are { "error": { "code", "message" } } with a stable code.',
      license: { name: options.license, identifier: options.license },
    },
    // Relative: the paths are under wherever this document was fetched from, whatever host or
    // proxy that was.
    servers: [{ url: '/', description: 'The server that served this document.' }],
    // The scheme is declared even when this server takes no token: a client generated from a
    // loopback server's document must still send one to a server off loopback, which requires it.
    // `{}`: this server also answers without one.
    security: options.auth ? [{ bearer: [] }] : [{}, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The token of IDS_AUTH_TOKEN or --auth-token-file: required by every server off loopback (unless a proxy in front authenticates), except on /health/*, /openapi.json and /.',
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          additionalProperties: false,
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              additionalProperties: false,
              properties: { code: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
        Id: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: idString } },
        Ids: {
          type: 'object',
          required: ['ids'],
          additionalProperties: false,
          properties: { ids: { type: 'array', items: idString } },
        },
        Decomposed: {
          type: 'object',
          required: ['id', 'decimal', 'layout', 'time', 'elapsedMs', 'sequence', 'machine'],
          additionalProperties: false,
          properties: {
            id: idString,
            decimal: { type: 'string', pattern: '^[0-9]+$' },
            layout: { type: 'string' },
            time: { type: 'string', format: 'date-time', description: 'Start of its tick.' },
            elapsedMs: { type: 'integer', description: 'ms from the epoch to its tick.' },
            sequence: { type: 'integer', minimum: 0 },
            machine: { type: 'integer', minimum: 0 },
            parts: { type: 'object', additionalProperties: { type: 'integer' } },
          },
        },
        Layout: {
          type: 'object',
          required: [
            'name',
            'timeBits',
            'sequenceBits',
            'machineBits',
            'timeUnitMs',
            'epoch',
            'maxId',
            'limits',
            'service',
            'formats',
          ],
          additionalProperties: false,
          properties: {
            name: { type: 'string' },
            timeBits: { type: 'integer' },
            sequenceBits: { type: 'integer' },
            machineBits: { type: 'integer' },
            timeUnitMs: { type: 'number' },
            epoch: { type: 'string', format: 'date-time' },
            fieldOrder: { type: 'string' },
            maxId: { type: 'string' },
            limits: {
              type: 'object',
              required: ['lifetimeYears', 'endsAt', 'idsPerSecond', 'machines'],
              properties: {
                lifetimeYears: { type: 'number' },
                endsAt: { type: 'string' },
                idsPerSecond: { type: 'number' },
                machines: { type: 'number' },
                unsafeNumberFrom: { type: ['string', 'null'] },
              },
            },
            service: {
              type: 'object',
              required: ['machines', 'idsPerSecond', 'maxCount'],
              additionalProperties: false,
              properties: {
                machines: { type: 'integer', description: 'Generators (machine IDs) in this process.' },
                idsPerSecond: { type: 'number', description: 'Their combined ceiling.' },
                maxCount: { type: 'integer' },
              },
            },
            formats: { type: 'array', items: { type: 'string' } },
          },
        },
        Live: {
          type: 'object',
          required: ['status'],
          additionalProperties: false,
          properties: { status: { const: 'live' } },
        },
        Ready: {
          type: 'object',
          required: ['ready', 'shuttingDown', 'machines'],
          additionalProperties: false,
          properties: {
            ready: { type: 'boolean' },
            shuttingDown: { type: 'boolean' },
            machines: {
              type: 'array',
              items: {
                type: 'object',
                required: ['slot', 'machineId', 'state'],
                additionalProperties: false,
                properties: {
                  slot: { type: 'integer' },
                  machineId: { type: 'integer' },
                  state: { enum: ['held', 'fenced', 'closed'] },
                },
              },
            },
          },
        },
        // Only with the token routes: a schema nothing refers to is a linter's warning.
        ...(options.tokens
          ? {
              Token: {
                type: 'object',
                required: ['token', 'ttlSeconds', 'expiresAt'],
                additionalProperties: false,
                properties: {
                  token: { type: 'string', pattern: '^[0-9]+$' },
                  ttlSeconds: { type: 'integer' },
                  expiresAt: { type: 'string', format: 'date-time' },
                },
              },
            }
          : {}),
      },
    },
  };
}
