// The OpenAPI 3.1 description of the routes, served at /openapi.json. The tests validate it with
// an OpenAPI validator and check real responses against its schemas, so it cannot drift.
import { pathParameterNames, refusesIdempotencyKey, type ServerRoute } from './router.js';

/** A JSON media type of `schema`. */
export const json = (schema: unknown) => ({ 'application/json': { schema } });
/** A reference to a schema of the document's components. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** An error response described by `description`. */
export const error = (description: string) => ({ description, content: json(ref('Error')) });

/**
 * An object schema with these properties and no others; `required` names the ones always
 * present (all of them unless given).
 */
export const closedObject = (
  properties: Record<string, unknown>,
  required: readonly string[] = Object.keys(properties),
) => ({ type: 'object', required, additionalProperties: false, properties });

/** An ID in a JSON body. */
const idString = {
  type: 'string',
  description: 'An ID in the requested encoding (decimal by default); never a JSON number.',
};

/** The schemas the routes refer to with `ref(name)`. */
const SCHEMAS: Record<string, unknown> = {
  Error: closedObject({
    error: closedObject({ code: { type: 'string' }, message: { type: 'string' } }),
  }),
  Id: closedObject({ id: idString }),
  Ids: closedObject({ ids: { type: 'array', items: idString } }),
  Decomposed: closedObject(
    {
      id: idString,
      decimal: { type: 'string', pattern: '^[0-9]+$' },
      layout: { type: 'string' },
      time: { type: 'string', format: 'date-time', description: 'Start of its tick.' },
      elapsedMs: { type: 'integer', description: 'ms from the epoch to its tick.' },
      sequence: { type: 'integer', minimum: 0 },
      machine: { type: 'integer', minimum: 0 },
      parts: { type: 'object', additionalProperties: { type: 'integer' } },
    },
    ['id', 'decimal', 'layout', 'time', 'elapsedMs', 'sequence', 'machine'],
  ),
  Layout: closedObject(
    {
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
      service: closedObject({
        machines: { type: 'integer', description: 'Generators (machine IDs) in this process.' },
        idsPerSecond: { type: 'number', description: 'Their combined ceiling.' },
        maxCount: { type: 'integer' },
      }),
      formats: { type: 'array', items: { type: 'string' } },
    },
    [
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
  ),
  Live: closedObject({ status: { const: 'live' } }),
  Ready: closedObject({
    ready: { type: 'boolean' },
    shuttingDown: { type: 'boolean' },
    machines: {
      type: 'array',
      items: closedObject({
        slot: { type: 'integer' },
        machineId: { type: 'integer' },
        state: { enum: ['held', 'fenced', 'closed'] },
      }),
    },
  }),
  Token: closedObject({
    token: { type: 'string', pattern: '^[0-9]+$' },
    ttlSeconds: { type: 'integer' },
    expiresAt: { type: 'string', format: 'date-time' },
  }),
};

/** The responses every route may give, each added unless the route declares its own. */
const badQuery = error('A bad query: an unknown or repeated parameter, or a bad value.');
const unauthorized = error('Missing or wrong bearer token (when the server requires one).');
const rateLimited = error('Over the per-client rate limit; see Retry-After.');

/** What the document depends on besides the routes. */
export interface OpenApiOptions {
  /** The package version. */
  readonly version: string;
  /** The package's license, an SPDX identifier. */
  readonly license: string;
  /** Whether a bearer token is required. */
  readonly auth: boolean;
  /** The routes, in matching order: each is one operation of the document. */
  readonly routes: readonly ServerRoute[];
}

/** A route's operation, from its declaration. */
function operationOf(route: ServerRoute): Record<string, unknown> {
  const declared = route.parameters ?? [];
  // A path parameter the route does not describe is still a required string of the document.
  const implicit = pathParameterNames(route.path)
    .filter((name) => !declared.some((p) => p.in === 'path' && p.name === name))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const parameters = [
    ...implicit,
    ...declared.map((p) => (p.in === 'path' ? { ...p, required: true } : { required: false, ...p })),
  ];
  const responses: Record<string, unknown> = {
    '400': badQuery,
    ...(route.auth === false ? {} : { '401': unauthorized }),
    ...(route.limited === false ? {} : { '429': rateLimited }),
    ...route.responses,
  };
  if (refusesIdempotencyKey(route)) {
    const bad = responses['400'] as { description: string };
    responses['400'] = {
      ...bad,
      description: `${bad.description} An Idempotency-Key header (ERR_IDEMPOTENCY_NOT_SUPPORTED: only GET /ids honours one).`,
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.auth === false ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document of a server with these routes. */
export function openapiDocument(options: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of options.routes) {
    paths[route.path] ??= {};
    const item = paths[route.path] as Record<string, unknown>;
    // The first route of a method and path is the one matched, so the one described.
    item[route.method.toLowerCase()] ??= operationOf(route);
  }
  // Only the schemas the operations refer to: one nothing refers to is a linter's warning.
  const text = JSON.stringify(paths);
  const schemas = Object.fromEntries(
    Object.entries(SCHEMAS).filter(([name]) => text.includes(`"#/components/schemas/${name}"`)),
  );
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
      schemas,
    },
  };
}
