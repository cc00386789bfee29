// The second table of `ids compare` (every scheme, not only bit layouts) and `ids generate
// --scheme`: UUIDs from the uuid package, ULIDs from the ulid package, segments from
// @ids/segment. Each library is imported only when its scheme is asked for.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { compareSchemes, type SchemeComparison } from '@ids/engine';
import { importOptional, segmentStoreNeeds } from '@ids/engine/internal';
import { UsageError } from './errors.js';
import { type Io, print } from './io.js';
import { parseLayout } from './layouts.js';
import { int } from './table.js';

/** The layouts whose scheme rows `ids compare` shows after the non-layout schemes. */
export const SCHEME_LAYOUTS = ['sonyflake', 'twitter'];

/** The scheme rows: UUIDv4, UUIDv7, ULID, segment, then Sonyflake and snowflake (twitter). */
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
export const SCHEMES = ['uuidv4', 'uuidv7', 'ulid', 'segment'] as const;

/** The options `ids generate` adds for --scheme, as node:util parseArgs takes them. */
export const SCHEME_OPTIONS = {
  scheme: { type: 'string' },
  store: { type: 'string' },
  tag: { type: 'string' },
} as const;

export const SCHEME_HELP = `      --scheme NAME     ${SCHEMES.join(', ')} instead of a layout: UUIDs (uuid package),
                        ULIDs (ulid package, monotonic) or segment IDs (@ids/segment)
      --store WHERE     for segment: postgres://..., mysql://..., redis://... or pglite:DIR
                        (default pglite:$XDG_DATA_HOME/ids/segment, kept between runs)
      --tag NAME        for segment: the tag to draw from (default "default"), created
                        once beforehand: ids segment create-tag NAME --after 0`;

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
  if (!(SCHEMES as readonly string[]).includes(scheme)) {
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
