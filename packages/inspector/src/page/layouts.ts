// The layouts the page knows by name. They are written out here, not imported from
// @ids/sonyflake and @ids/snowflake, because those packages also carry the Node-only machine-ID
// code; test/layouts.test.ts checks that each one equals the layout its package builds.
import { defineLayout, type Layout, type LayoutSpec } from '@ids/engine';

/** A layout as the page offers it: a key for the select and URLs, a label for people. */
export interface NamedLayout {
  /** The select's value, e.g. "sonyflake-v2". */
  readonly key: string;
  /** How the page writes it, e.g. "Sonyflake v2". */
  readonly label: string;
  /** The validated layout. */
  readonly layout: Layout;
}

const SONYFLAKE_BITS = { timeBits: 39, timeUnitMs: 10, sequenceBits: 8, machineBits: 16 } as const;
const SNOWFLAKE_BITS = {
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 12,
  machineBits: 10,
  fieldOrder: 'machine-sequence',
} as const;

/** The named layouts, in the order the page lists them. */
export const BUILT_IN: readonly NamedLayout[] = [
  {
    key: 'sonyflake',
    label: 'Sonyflake',
    layout: defineLayout({ name: 'sonyflake', ...SONYFLAKE_BITS, epochMs: Date.UTC(2014, 8, 1) }),
  },
  {
    key: 'sonyflake-v2',
    label: 'Sonyflake v2',
    layout: defineLayout({ name: 'sonyflake', ...SONYFLAKE_BITS, epochMs: Date.UTC(2025, 0, 1) }),
  },
  {
    key: 'twitter',
    label: 'Twitter',
    layout: defineLayout({
      name: 'twitter',
      ...SNOWFLAKE_BITS,
      epochMs: 1288834974657,
      machineParts: [
        { name: 'datacenter', bits: 5 },
        { name: 'worker', bits: 5 },
      ],
    }),
  },
  {
    key: 'discord',
    label: 'Discord',
    layout: defineLayout({
      name: 'discord',
      ...SNOWFLAKE_BITS,
      epochMs: 1420070400000,
      machineParts: [
        { name: 'worker', bits: 5 },
        { name: 'process', bits: 5 },
      ],
    }),
  },
];

/** What the custom-bits form starts with: Twitter's rate, more machines, a recent epoch. */
export const DEFAULT_CUSTOM: LayoutSpec = {
  name: 'custom',
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 10,
  machineBits: 12,
  epochMs: Date.UTC(2024, 0, 1),
  fieldOrder: 'machine-sequence',
};

/** The custom layout as the page lists it. @throws the errors of defineLayout for a bad spec. */
export function customLayout(spec: LayoutSpec): NamedLayout {
  return { key: 'custom', label: 'Custom', layout: defineLayout({ ...spec, name: 'custom' }) };
}
