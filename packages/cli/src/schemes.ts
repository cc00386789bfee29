// The second table of `ids compare` (every scheme, not only bit layouts) and `ids generate
// --scheme`: UUIDs from the uuid package, ULIDs from the ulid package, segments from
// @ids/segment. Each library is imported only when its scheme is asked for.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Layout, LayoutSpec } from '@ids/engine';
import { importOptional, STORES, type StoreEntry, segmentStoreNeeds } from '@ids/engine/internal';
import { compareLayouts } from '@ids/engine/read';
import type { Flags } from './command.js';
import { UsageError } from './errors.js';
import { type Io, print } from './io.js';
import { parseLayout } from './layouts.js';
import { int } from './table.js';

/**
 * One column of the scheme table: how a way of making IDs behaves, whatever its bit layout. The
 * facts of UUIDv4, UUIDv7, ULID and segment are data (NON_LAYOUT_SCHEMES); the columns of
 * Sonyflake and snowflake are derived from their layouts (`compareSchemes`).
 */
export interface SchemeComparison {
  /** The scheme's name ("uuidv4", "uuidv7", "ulid", "segment", or a layout's name). */
  readonly name: string;
  /** Bits of one ID (for UUIDs and ULIDs, of the 128-bit value; the random part is in `reveals`). */
  readonly bits: number;
  /** Whether IDs sort by the time they were made. */
  readonly sortableByTime: boolean;
  /** How they sort, in a few words (to which resolution, and what breaks ties). */
  readonly sortNote: string;
  /** The most IDs one generator can make per second, set by the scheme; null when the scheme sets no ceiling (CPU-bound). */
  readonly idsPerSecond: number | null;
  /** What generators must agree on, or ask, to stay unique. */
  readonly coordination: string;
  /** What an ID tells whoever sees it: creation time, machine, volume. */
  readonly reveals: string;
  /** How long the scheme lasts. */
  readonly lifetime: string;
  /** Whether every ID fits a signed 64-bit column (BIGINT) as a positive number. */
  readonly fitsSignedInt64: boolean;
}

/** The stores `--scheme segment` draws from, as the segment column names them: the store table's. */
export const SEGMENT_STORES: readonly string[] = STORES.filter((store: StoreEntry) => store.segment).map(
  (store) => store.title,
);

/**
 * UUIDv4 and UUIDv7 (RFC 9562), ULID, and Leaf-segment: the schemes `ids generate --scheme` makes
 * that have no bit layout of the engine's kind. Figures are the schemes' own; measured speeds are
 * in the benchmark.
 */
export const NON_LAYOUT_SCHEMES: readonly SchemeComparison[] = Object.freeze([
  {
    name: 'uuidv4',
    bits: 128,
    sortableByTime: false,
    sortNote: 'random order',
    idsPerSecond: null,
    coordination: 'none (122 random bits)',
    reveals: 'nothing',
    lifetime: 'unlimited',
    fitsSignedInt64: false,
  },
  {
    name: 'uuidv7',
    bits: 128,
    sortableByTime: true,
    sortNote: 'by the ms; a counter orders IDs of one ms within a process',
    idsPerSecond: null,
    coordination: 'none (74 random or counter bits)',
    reveals: 'creation time (ms)',
    lifetime: 'until 10889 (48-bit Unix ms)',
    fitsSignedInt64: false,
  },
  {
    name: 'ulid',
    bits: 128,
    sortableByTime: true,
    sortNote: 'by the ms; a monotonic factory orders IDs of one ms within a process',
    idsPerSecond: null,
    coordination: 'none (80 random bits)',
    reveals: 'creation time (ms)',
    lifetime: 'until 10889 (48-bit Unix ms)',
    fitsSignedInt64: false,
  },
  {
    name: 'segment',
    bits: 63,
    sortableByTime: false,
    sortNote: 'increasing per process; across processes only by segment',
    idsPerSecond: null,
    coordination: `a store (${SEGMENT_STORES.join(', ')}) once per segment of \`step\` IDs`,
    reveals: 'volume (a dense counter); no time, no machine',
    lifetime: '2^63 - 1 IDs per tag (292,000 years at 1,000,000 IDs/s)',
    fitsSignedInt64: true,
  },
] satisfies SchemeComparison[]);

/**
 * Every scheme side by side: the non-layout schemes (NON_LAYOUT_SCHEMES), then one column per
 * layout given, derived from the layout's limits.
 *
 * @throws what compareLayouts throws for the layouts.
 */
export function compareSchemes(layouts: readonly (Layout | LayoutSpec)[] = []): SchemeComparison[] {
  const derived = compareLayouts(layouts).map(
    (c): SchemeComparison => ({
      name: c.name,
      bits: c.timeBits + c.sequenceBits + c.machineBits,
      sortableByTime: true,
      sortNote: `by the ${c.timeUnitMs} ms tick; across machines only to the tick`,
      idsPerSecond: c.idsPerSecond,
      coordination: `a machine ID unique among ${c.machines.toLocaleString('en-US')}`,
      reveals: `creation time (${c.timeUnitMs} ms), machine ID, IDs per tick`,
      lifetime: `${Math.floor(c.lifetimeYears)} years (to ${c.endsAt.toISOString().slice(0, 10)})`,
      fitsSignedInt64: true,
    }),
  );
  return [...NON_LAYOUT_SCHEMES, ...derived];
}

/** The layouts whose scheme columns `ids compare` shows after the non-layout schemes. */
export const SCHEME_LAYOUTS = ['sonyflake', 'twitter'];

/** The scheme table: UUIDv4, UUIDv7, ULID, segment, then Sonyflake and snowflake (twitter). */
export function schemeTable(): SchemeComparison[] {
  return compareSchemes(
    SCHEME_LAYOUTS.map((spec) => {
      const { label, layout } = parseLayout(spec);
      return { ...layout, name: label === 'twitter' ? 'snowflake' : label };
    }),
  );
}

/** The scheme table as rows: one per figure, one column per scheme. */
export function schemeRows(table: readonly SchemeComparison[]): string[][] {
  const row = (label: string, cell: (s: SchemeComparison) => string) => [label, ...table.map(cell)];
  return [
    row('', (s) => s.name),
    row('bits', (s) => String(s.bits)),
    row('sortable by time', (s) => (s.sortableByTime ? 'yes' : 'no')),
    row('IDs/s per generator', (s) => (s.idsPerSecond === null ? 'no ceiling' : int(s.idsPerSecond))),
    row('coordination', (s) => s.coordination),
    row('an ID reveals', (s) => s.reveals),
    row('lifetime', (s) => s.lifetime),
    row('fits BIGINT', (s) => (s.fitsSignedInt64 ? 'yes' : 'no')),
  ];
}

/** The schemes `ids generate --scheme` takes. */
export const SCHEMES: readonly string[] = NON_LAYOUT_SCHEMES.map((scheme) => scheme.name);

/** The options `ids generate` adds for --scheme, as node:util parseArgs takes them. */
/** `ids generate`'s options of the other schemes. */
export const SCHEME_OPTIONS = {
  scheme: {
    type: 'string',
    value: 'NAME',
    help: `${SCHEMES.join(', ')} instead of a layout: UUIDs (uuid package), ULIDs (ulid package, monotonic) or segment IDs (@ids/segment)`,
  },
  store: {
    type: 'string',
    value: 'WHERE',
    help: 'for segment: postgres://..., mysql://..., redis://... or pglite:DIR, kept between runs',
    byDefault: 'pglite:$XDG_DATA_HOME/ids/segment',
  },
  tag: {
    type: 'string',
    value: 'NAME',
    help: 'for segment: the tag to draw from, never created here: made once beforehand with ids segment create-tag NAME --after 0',
    byDefault: '"default"',
  },
} as const satisfies Flags;

/** Where `--scheme segment` keeps its PGlite database by default, so runs never restart at 1. */
export function defaultSegmentStore(env: Io['env']): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return `pglite:${join(base, 'ids', 'segment')}`;
}

type Next = () => string | Promise<string>;

async function generatorOf(
  scheme: string,
  options: { store?: string; tag?: string },
  io: Io,
): Promise<{ next: Next; close(): Promise<void> }> {
  if (scheme === 'uuidv4' || scheme === 'uuidv7') {
    const uuid = await import('uuid');
    const make = scheme === 'uuidv4' ? uuid.v4 : uuid.v7;
    return { next: () => make(), close: async () => {} };
  }
  if (scheme === 'ulid') {
    const { monotonicFactory } = await import('ulid');
    const make = monotonicFactory();
    return { next: () => make(), close: async () => {} };
  }
  const where = options.store ?? defaultSegmentStore(io.env);
  const { use, also } = segmentStoreNeeds(where);
  const { checkTag, openSegmentStore, Segments } = await importOptional(
    '@ids/segment',
    () => import('@ids/segment'),
    use,
    also,
  );
  checkTag(options.tag ?? 'default'); // before a store is opened (PGlite takes seconds to start)
  const store = await openSegmentStore(where);
  try {
    const segments = await Segments.create({ store, tag: options.tag ?? 'default' });
    return {
      next: async () => (await segments.nextId()).toString(),
      close: async () => {
        await segments.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * `ids generate --scheme NAME`: `count` IDs of a non-layout scheme, one per line.
 * @throws UsageError for an unknown scheme, or options that belong to layouts or to segment only.
 */
export async function generateScheme(
  values: {
    scheme?: string;
    store?: string;
    tag?: string;
    layout?: string;
    'machine-id'?: string;
    format?: string;
  },
  count: number,
  io: Io,
): Promise<number> {
  const scheme = values.scheme ?? '';
  if (!SCHEMES.includes(scheme)) {
    throw new UsageError(
      `--scheme: expected one of ${SCHEMES.join(', ')}, received ${JSON.stringify(scheme)}`,
    );
  }
  for (const flag of ['layout', 'machine-id', 'format'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} does not apply to --scheme ${scheme}`);
  }
  if (scheme !== 'segment' && (values.store !== undefined || values.tag !== undefined)) {
    throw new UsageError(`--store and --tag apply to --scheme segment only`);
  }
  const generator = await generatorOf(scheme, values, io);
  try {
    let text = '';
    let open = true;
    for (let done = 0; done < count && open; done++) {
      text += `${await generator.next()}\n`;
      if (text.length >= 65_536 || done === count - 1) {
        open = await print(io.stdout, text); // false once the reader has gone: stop quietly
        text = '';
      }
    }
  } finally {
    await generator.close();
  }
  return 0;
}
