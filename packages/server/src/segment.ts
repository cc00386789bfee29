// Segment IDs by tag (Meituan Leaf's `/api/segment/get/{tag}`), as a plugin of the server. The
// segment package, and through it PGlite, pg or ioredis, is imported only when a store is
// configured, so a server without one starts without loading them.
import { errorText, importOptional, segmentStoreNeeds } from '@ids/engine/internal';
import type { SegmentStore, Segments } from '@ids/segment';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { HttpError, ServerConfigError } from './errors.js';
import { closedObject, error, json } from './openapi.js';
import type { RouteParameter, ServerPlugin, ServerRoute } from './router.js';
import { countOf, countParameter } from './routes.js';

/** How the segment routes are set up. */
export interface SegmentRoutesOptions {
  /** The store: `pglite:`, `pglite:<dir>`, `postgres://...`, `mysql://...` or `redis://...` (see openSegmentStore). */
  readonly store: string;
  /**
   * Tags checked (and their first segment fetched) at start. Never created: a missing one is
   * logged through `onError` and answers 404 until an operator creates it; the server starts.
   */
  readonly tags?: readonly string[];
  /** Bound on `count` of the batch route. */
  readonly maxCount: number;
  /** Where a configured tag that cannot be served at start is reported. */
  readonly onError?: (error: unknown) => void;
  /** The registry the per-tag metrics go to (the server's). */
  readonly registry: Registry;
}

/** What an operator runs for a missing tag; the store string is not repeated (it may hold a password). */
export function createTagHint(tag: string): string {
  return `create it once with: ids segment create-tag ${tag} --store <the --segment-store> --after N, N = 0 for a new tag, else at least the highest ID the tag ever issued`;
}

/**
 * Per-tag metrics, Leaf's monitor page as Prometheus series: IDs served, segment switches, the
 * store's fetch latency, and each tag's step and IDs held. The step and the IDs held are read
 * from the tag's Segments at each scrape, not kept up to date per request.
 */
function segmentMetrics(registry: Registry, open: ReadonlyMap<string, Segments>) {
  const registers = [registry];
  const labelNames = ['tag'] as const;
  const seen = new Map<string, number>();
  const metrics = {
    served: new Counter({
      name: 'ids_segment_ids_served_total',
      help: 'Segment IDs answered, by tag',
      labelNames,
      registers,
    }),
    switches: new Counter({
      name: 'ids_segment_switches_total',
      help: "Times a tag's current segment was used up and the next one took its place",
      labelNames,
      registers,
      collect() {
        // Counted by the tag's Segments; added here as the difference since the last scrape.
        for (const [tag, segments] of open) {
          const now = segments.stats.switches;
          this.inc({ tag }, now - (seen.get(tag) ?? 0));
          seen.set(tag, now);
        }
      },
    }),
    fetchSeconds: new Histogram({
      name: 'ids_segment_fetch_seconds',
      help: 'Duration of the store calls that take a segment (failed ones too), by tag',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    step: new Gauge({
      name: 'ids_segment_step',
      help: "The step (IDs per segment) a tag's next fetch asks for",
      labelNames,
      registers,
      collect() {
        for (const [tag, segments] of open) this.set({ tag }, segments.stats.step);
      },
    }),
    remaining: new Gauge({
      name: 'ids_segment_remaining',
      help: 'IDs of a tag held in memory and not yet answered (current and next segment)',
      labelNames,
      registers,
      collect() {
        for (const [tag, segments] of open) this.set({ tag }, Number(segments.stats.remaining));
      },
    }),
  };
  return {
    ...metrics,
    /** Every series of `tag` at 0, so that alerts see it before its first request. */
    zero(tag: string) {
      metrics.served.inc({ tag }, 0);
      metrics.switches.inc({ tag }, 0);
      metrics.fetchSeconds.zero({ tag });
      metrics.remaining.set({ tag }, 0);
    },
  };
}

/** The store, with each `allocate` timed into the fetch histogram. */
function timedStore(store: SegmentStore, seconds: Histogram<'tag'>): SegmentStore {
  return {
    kind: store.kind,
    createTag: (tag, options) => store.createTag(tag, options),
    async allocate(tag, step) {
      const t0 = performance.now();
      try {
        return await store.allocate(tag, step);
      } finally {
        seconds.observe({ tag }, (performance.now() - t0) / 1000);
      }
    },
    close: () => store.close(),
  };
}

// The segment errors a client can act on, by their stable codes (the classes are not imported
// here, to keep the package lazy). Any other IdsError (a corrupt store, one gone backwards) is
// the service's state and answers 503 through the HTTP layer's rule.
function asHttpError(error: unknown, tag?: string): unknown {
  const code = (error as { code?: unknown })?.code;
  const message = errorText(error);
  if (code === 'ERR_IDS_SEGMENT_INVALID_TAG') return new HttpError(400, code, message);
  if (code === 'ERR_IDS_SEGMENT_UNKNOWN_TAG')
    return new HttpError(404, code, tag === undefined ? message : `${message}. ${createTagHint(tag)}`);
  if (code === 'ERR_IDS_STORE_UNAVAILABLE') {
    return new HttpError(503, code, message, { 'retry-after': '1' });
  }
  return error;
}

/** The tag of a segment route's path: @ids/segment's tag rule, taken from the package as loaded. */
const tagParameter = (rule: { pattern: RegExp; text: string }): RouteParameter => ({
  name: 'tag',
  in: 'path',
  description: `The tag: ${rule.text}.`,
  schema: { type: 'string', pattern: rule.pattern.source },
});

/** A segment ID in a JSON body. */
const segmentId = {
  type: 'string',
  pattern: '^[1-9][0-9]*$',
  description: 'A decimal ID from 1 to 2^63 - 1.',
};

/** What the segment routes answer when they cannot serve. */
const failures = {
  '400': error('A bad tag (ERR_IDS_SEGMENT_INVALID_TAG), count or query parameter.'),
  '404': error(
    'The tag is not in the store (ERR_IDS_SEGMENT_UNKNOWN_TAG): never created, or the store forgot it. The message says what to run (ids segment create-tag).',
  ),
  '503': error(
    'Both buffers are empty and the store cannot answer (ERR_IDS_STORE_UNAVAILABLE), or the store is corrupt.',
  ),
};

/**
 * Opens the segment store and returns the plugin serving `GET /api/segment/get/{tag}` (one ID)
 * and `GET /api/segment/ids/{tag}?count=N` (N increasing IDs of the tag).
 * Tags are never created here: creating one at every start is how a store that forgot a tag
 * (Redis without persistence) came to serve 1 again.
 * @throws ServerConfigError for a store string or tag it cannot read; the store's error when it
 * cannot be opened.
 */
export async function segmentPlugin(options: SegmentRoutesOptions): Promise<ServerPlugin> {
  const { use, also } = segmentStoreNeeds(options.store);
  const { openSegmentStore, SegmentTags, checkTag, TAG_RULE } = await importOptional(
    '@ids/segment',
    () => import('@ids/segment'),
    use,
    also,
  );
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
  // The tags that have served, for the metrics read at each scrape. Bounded by the tags the
  // store holds: a tag it lacks fails to open and is not kept.
  const open = new Map<string, Segments>();
  const metrics = segmentMetrics(options.registry, open);
  for (const tag of options.tags ?? []) metrics.zero(tag);
  const tags = new SegmentTags({ store: timedStore(store, metrics.fetchSeconds) });
  const segmentsOf = async (tag: string): Promise<Segments> => {
    const segments = await tags.get(tag);
    if (!open.has(tag)) {
      // Not zero(): the fetch that opened it is already in the histogram, and zero() resets it.
      metrics.served.inc({ tag }, 0);
      metrics.switches.inc({ tag }, 0);
      open.set(tag, segments);
    }
    return segments;
  };
  // The configured tags' first segments, so their first requests are served from memory. One
  // that fails (UnknownTagError says to create it) is reported and the server starts anyway: its
  // routes answer the typed error, and serve once the tag exists (SegmentTags asks again).
  await Promise.all(
    (options.tags ?? []).map((tag) => segmentsOf(tag).catch((error: unknown) => options.onError?.(error))),
  );
  const guarded = async <T>(tag: string, run: (segments: Segments) => Promise<T>): Promise<T> => {
    try {
      return await run(await segmentsOf(tag));
    } catch (error) {
      throw asHttpError(error, tag);
    }
  };
  // What a HEAD can check without issuing: the tag's name. Whether the store knows the tag is
  // not asked, since finding out would take a range of it.
  const checkTagName = (tag: string | undefined) => {
    try {
      checkTag(tag);
    } catch (error) {
      throw asHttpError(error);
    }
  };
  const routes: ServerRoute[] = [
    {
      method: 'GET',
      path: '/api/segment/get/{tag}',
      operationId: 'getSegmentId',
      summary: "The tag's next segment ID (Leaf's segment mode).",
      issues: true,
      parameters: [tagParameter(TAG_RULE)],
      responses: {
        '200': {
          description:
            'The next ID of the tag: increasing within this process, unique across processes sharing the store.',
          content: json(closedObject({ id: segmentId })),
        },
        ...failures,
      },
      checkHead: ({ params }) => checkTagName(params.tag),
      async handle({ params }) {
        const tag = params.tag as string;
        const id = await guarded(tag, (segments) => segments.nextId());
        metrics.served.inc({ tag });
        return { json: { id: id.toString() } };
      },
    },
    {
      method: 'GET',
      path: '/api/segment/ids/{tag}',
      operationId: 'getSegmentIds',
      summary: "The tag's next N segment IDs, increasing.",
      issues: true,
      parameters: [tagParameter(TAG_RULE), countParameter(options.maxCount)],
      responses: {
        '200': {
          description: 'The IDs, increasing.',
          content: json(closedObject({ ids: { type: 'array', items: segmentId } })),
        },
        ...failures,
      },
      checkHead({ params, query }) {
        countOf(query, options.maxCount);
        checkTagName(params.tag);
      },
      async handle({ params, query }) {
        const count = countOf(query, options.maxCount);
        const tag = params.tag as string;
        const ids = await guarded(tag, (segments) => segments.nextIds(count));
        metrics.served.inc({ tag }, count);
        return { json: { ids: ids.map(String) } };
      },
    },
  ];
  return {
    name: `segment (${store.kind})`,
    routes,
    async close() {
      await tags.close();
      await store.close();
    },
  };
}
