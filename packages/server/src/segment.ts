// Segment IDs by tag (Meituan Leaf's `/api/segment/get/{tag}`), as a plugin of the server. The
// segment package, and through it PGlite, pg or ioredis, is imported only when a store is
// configured, so a server without one starts without loading them.
import { errorText } from '@ids/engine';
import { HttpError, ServerConfigError } from './errors.js';
import { error, json } from './openapi.js';
import type { ServerPlugin, ServerRoute } from './routes.js';
import { countOf } from './service.js';

/** How the segment routes are set up. */
export interface SegmentRoutesOptions {
  /** The store: `pglite:`, `pglite:<dir>`, `postgres://...`, `mysql://...` or `redis://...` (see openSegmentStore). */
  readonly store: string;
  /** Tags registered at start when absent (first ID 1); other tags must exist in the store. */
  readonly tags?: readonly string[];
  /** Bound on `count` of the batch route. */
  readonly maxCount: number;
}

// The segment errors a client can act on, by their stable codes (the classes are not imported
// here, to keep the package lazy). Any other IdsError (a corrupt store, one gone backwards) is
// the service's state and answers 503 through the HTTP layer's rule.
function asHttpError(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  const message = errorText(error);
  if (code === 'ERR_IDS_SEGMENT_INVALID_TAG') return new HttpError(400, code, message);
  if (code === 'ERR_IDS_SEGMENT_UNKNOWN_TAG') return new HttpError(404, code, message);
  if (code === 'ERR_IDS_SEGMENT_STORE_UNAVAILABLE') {
    return new HttpError(503, code, message, { 'retry-after': '1' });
  }
  return error;
}

/**
 * Opens the segment store and returns the plugin serving `GET /api/segment/get/{tag}` (one ID)
 * and `GET /api/segment/ids/{tag}?count=N` (N increasing IDs of the tag).
 * @throws InvalidArgumentError for a store string it cannot read; the store's error when the
 * tags cannot be registered at start.
 */
export async function segmentPlugin(options: SegmentRoutesOptions): Promise<ServerPlugin> {
  const { openSegmentStore, SegmentTags, checkTag } = await import('@ids/segment');
  // A bad tag or store string is the configuration's fault: exit 2 before anything listens. A
  // store that cannot be reached is not (exit 1).
  const misconfigured = (what: string, error: unknown) =>
    (error as { code?: unknown })?.code === 'ERR_IDS_INVALID_ARGUMENT' ||
    (error as { code?: unknown })?.code === 'ERR_IDS_SEGMENT_INVALID_TAG'
      ? new ServerConfigError(`${what}: ${(error as Error).message}`, { cause: error })
      : error;
  for (const tag of options.tags ?? []) {
    try {
      checkTag(tag);
    } catch (error) {
      throw misconfigured('segment-tags', error);
    }
  }
  const store = await openSegmentStore(options.store).catch((error: unknown) => {
    throw misconfigured('segment-store', error);
  });
  try {
    // An existing tag is never moved: registering is INSERT ... DO NOTHING (SET NX on Redis).
    for (const tag of options.tags ?? []) await store.createTag(tag, { after: 0n, step: 1000 });
  } catch (error) {
    await store.close();
    throw error;
  }
  const tags = new SegmentTags({ store });
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw asHttpError(error);
    }
  };
  const routes: ServerRoute[] = [
    {
      method: 'GET',
      path: '/api/segment/get/{tag}',
      pattern: /^\/api\/segment\/get\/([^/]+)$/,
      async handle({ params }) {
        const id = await guarded(() => tags.next(params[0] as string));
        return { json: { id: id.toString() } };
      },
    },
    {
      method: 'GET',
      path: '/api/segment/ids/{tag}',
      pattern: /^\/api\/segment\/ids\/([^/]+)$/,
      query: ['count'],
      async handle({ params, query }) {
        const count = countOf(query, options.maxCount);
        const ids = await guarded(() => tags.nextIds(params[0] as string, count));
        return { json: { ids: ids.map(String) } };
      },
    },
  ];
  return {
    name: `segment (${store.kind})`,
    routes,
    openapiPaths: segmentOpenapiPaths(options.maxCount),
    async close() {
      await tags.close();
      await store.close();
    },
  };
}

/** The OpenAPI path items of the segment routes. */
function segmentOpenapiPaths(maxCount: number): Record<string, unknown> {
  const tag = {
    name: 'tag',
    in: 'path',
    required: true,
    description: 'The tag: 1-64 of A-Z a-z 0-9 _ . -, starting with a letter or digit.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' },
  };
  const failures = {
    '400': error('A bad tag (ERR_IDS_SEGMENT_INVALID_TAG), count or query parameter.'),
    '401': error('Missing or wrong bearer token (when the server requires one).'),
    '404': error('The tag is not registered in the store (ERR_IDS_SEGMENT_UNKNOWN_TAG).'),
    '429': error('Over the per-client rate limit; see Retry-After.'),
    '503': error(
      'Both buffers are empty and the store cannot answer (ERR_IDS_SEGMENT_STORE_UNAVAILABLE), or the store is corrupt.',
    ),
  };
  const segmentId = {
    type: 'string',
    pattern: '^[1-9][0-9]*$',
    description: 'A decimal ID from 1 to 2^63 - 1.',
  };
  return {
    '/api/segment/get/{tag}': {
      get: {
        operationId: 'getSegmentId',
        summary: "The tag's next segment ID (Leaf's segment mode).",
        parameters: [tag],
        responses: {
          '200': {
            description:
              'The next ID of the tag: increasing within this process, unique across processes sharing the store.',
            content: json({
              type: 'object',
              required: ['id'],
              additionalProperties: false,
              properties: { id: segmentId },
            }),
          },
          ...failures,
        },
      },
    },
    '/api/segment/ids/{tag}': {
      get: {
        operationId: 'getSegmentIds',
        summary: "The tag's next N segment IDs, increasing.",
        parameters: [
          tag,
          {
            name: 'count',
            in: 'query',
            required: true,
            schema: { type: 'integer', minimum: 1, maximum: maxCount },
          },
        ],
        responses: {
          '200': {
            description: 'The IDs, increasing.',
            content: json({
              type: 'object',
              required: ['ids'],
              additionalProperties: false,
              properties: { ids: { type: 'array', items: segmentId } },
            }),
          },
          ...failures,
        },
      },
    },
  };
}
