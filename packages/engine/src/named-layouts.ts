// The layouts known by name: the one table read by the CLI's and the server's --layout, the
// snowflake `preset` setting and the inspector page, so a new named layout is an entry here and
// nowhere else. Nothing here imports Node: the inspector page bundles this file for browsers.
import { defineLayout, type Layout } from './layout.js';

/**
 * A layout known by name. `Name` and `Family` narrow the entries of NAMED_LAYOUTS to their own
 * name and family, so a flavour can type the names it issues (SnowflakePreset).
 */
export interface NamedLayout<
  Name extends string = string,
  Family extends 'sonyflake' | 'snowflake' = 'sonyflake' | 'snowflake',
> {
  /** Its key in NAMED_LAYOUTS: what --layout takes, e.g. 'sonyflake-v2'. */
  readonly name: Name;
  /** How pages write it for people, e.g. 'Sonyflake v2'. */
  readonly label: string;
  /** Other names that pick it ('snowflake' picks twitter). */
  readonly aliases?: readonly string[];
  /**
   * The generator that issues it: 'sonyflake' (a Sonyflake with these bits and this start time)
   * or 'snowflake' (a Snowflake whose `preset` is this name).
   */
  readonly family: Family;
  /** The validated layout. */
  readonly layout: Layout;
}

const SONYFLAKE_BITS = { name: 'sonyflake', timeBits: 39, timeUnitMs: 10, sequenceBits: 8, machineBits: 16 };
const SNOWFLAKE_BITS = {
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 12,
  machineBits: 10,
  fieldOrder: 'machine-sequence',
} as const;

/** An entry of the table, typed with its own name and family. */
function entry<const Name extends string, const Family extends NamedLayout['family']>(
  named: NamedLayout<Name, Family>,
): NamedLayout<Name, Family> {
  return named;
}

/** Every named layout, in the order lists and pages show them. */
export const NAMED_LAYOUTS = {
  /** Go's sonyflake (v1 and the seed documents): 39 bits of 10 ms from 2014-09-01, 8 sequence, 16 machine. */
  sonyflake: entry({
    name: 'sonyflake',
    label: 'Sonyflake',
    family: 'sonyflake',
    layout: defineLayout({ ...SONYFLAKE_BITS, epochMs: Date.UTC(2014, 8, 1) }),
  }),
  /** Go's sonyflake v2 defaults: the same bits from 2025-01-01. */
  'sonyflake-v2': entry({
    name: 'sonyflake-v2',
    label: 'Sonyflake v2',
    family: 'sonyflake',
    layout: defineLayout({ ...SONYFLAKE_BITS, epochMs: Date.UTC(2025, 0, 1) }),
  }),
  /**
   * Twitter's snowflake: 41-bit time in ms from 2010-11-04T01:42:54.657Z, a 10-bit machine field
   * (datacenter 5 + worker 5) above a 12-bit sequence; bwmarrin/snowflake's defaults too.
   */
  twitter: entry({
    name: 'twitter',
    label: 'Twitter',
    aliases: ['snowflake'],
    family: 'snowflake',
    layout: defineLayout({
      name: 'twitter',
      ...SNOWFLAKE_BITS,
      epochMs: 1288834974657,
      machineParts: [
        { name: 'datacenter', bits: 5 },
        { name: 'worker', bits: 5 },
      ],
    }),
  }),
  /**
   * Discord's: Twitter's bits (worker 5 + process 5, a 12-bit increment) from 2015-01-01.
   * Discord documents a 42-bit time field; its top bit stays 0 until 2084-09-06, and this layout
   * ends there, keeping every ID a positive signed 64-bit integer.
   */
  discord: entry({
    name: 'discord',
    label: 'Discord',
    family: 'snowflake',
    layout: defineLayout({
      name: 'discord',
      ...SNOWFLAKE_BITS,
      epochMs: Date.UTC(2015, 0, 1),
      machineParts: [
        { name: 'worker', bits: 5 },
        { name: 'process', bits: 5 },
      ],
    }),
  }),
} as const;

const ALL: readonly NamedLayout[] = Object.values(NAMED_LAYOUTS);

/** Every name `namedLayout` takes: the table's names in order, then the aliases. */
export const LAYOUT_NAMES: readonly string[] = [
  ...ALL.map((entry) => entry.name),
  ...ALL.flatMap((entry) => entry.aliases ?? []),
];

/** The named layout a name (a key of NAMED_LAYOUTS or an alias) picks; undefined for any other text. */
export function namedLayout(name: string): NamedLayout | undefined {
  return ALL.find((entry) => entry.name === name || entry.aliases?.includes(name));
}
