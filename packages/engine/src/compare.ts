// The side-by-side comparison behind `ids compare`: what each layout gives, before a team
// commits to one for decades.
import { InvalidArgumentError, received } from './errors.js';
import {
  defineLayout,
  type FieldOrder,
  type Layout,
  type LayoutLimits,
  type LayoutSpec,
  layoutLimits,
  layoutShape,
  type MachinePart,
} from './layout.js';

/** One column of the comparison: the layout's shape and every figure `layoutLimits` derives. */
export interface LayoutComparison extends LayoutLimits {
  /** The layout's label ("custom" when its spec had none). */
  readonly name: string;
  /** Bits of the time field. */
  readonly timeBits: number;
  /** Length of one tick, in ms. */
  readonly timeUnitMs: number;
  /** Bits of the per-tick sequence. */
  readonly sequenceBits: number;
  /** Bits of the machine ID. */
  readonly machineBits: number;
  /** The named slices of the machine field, highest first; undefined when it is one field. */
  readonly machineParts: readonly MachinePart[] | undefined;
  /** Which low field sits higher. */
  readonly fieldOrder: FieldOrder;
  /** The instant time 0 stands for. */
  readonly epoch: Date;
}

/**
 * Compares layouts side by side, in the order given. Specs are validated as `defineLayout`
 * validates them.
 *
 * @throws InvalidArgumentError when `layouts` is not an array; the layout errors of defineLayout
 * (InvalidLayoutError and the InvalidBits* classes) for an invalid spec.
 */
export function compareLayouts(layouts: readonly (Layout | LayoutSpec)[]): LayoutComparison[] {
  if (!Array.isArray(layouts)) {
    throw new InvalidArgumentError(
      `compareLayouts: expected an array of layouts, received ${received(layouts)}`,
    );
  }
  return layouts.map((spec) => {
    const layout = defineLayout(spec);
    return {
      ...layoutShape(layout),
      machineParts: layout.machineParts,
      epoch: new Date(layout.epochMs),
      ...layoutLimits(layout),
    };
  });
}

/**
 * One row of the scheme comparison: how a way of making IDs behaves, whatever its bit layout.
 * The facts of UUIDv4, UUIDv7, ULID and segment are data here (NON_LAYOUT_SCHEMES); rows for
 * Sonyflake and snowflake layouts are derived from their layouts (`compareSchemes`).
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

/**
 * UUIDv4 and UUIDv7 (RFC 9562), ULID, and Leaf-segment: the schemes that have no bit layout of
 * this engine's kind. Figures are the schemes' own; measured speeds are in the benchmark.
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
    coordination: 'a store (PostgreSQL, Redis) once per segment of `step` IDs',
    reveals: 'volume (a dense counter); no time, no machine',
    lifetime: '2^63 - 1 IDs per tag (292,000 years at 1,000,000 IDs/s)',
    fitsSignedInt64: true,
  },
] satisfies SchemeComparison[]);

/**
 * Every scheme side by side: the non-layout schemes (NON_LAYOUT_SCHEMES), then one row per
 * layout given (for example Sonyflake's and Twitter's), derived from the layout's limits.
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
