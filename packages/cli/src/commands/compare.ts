import { compareLayouts, type LayoutComparison } from '@ids/engine/read';
import { type Command, defineCommand, type Flags, OPTIONS } from '../command.js';
import { print } from '../io.js';
import { DEFAULT_COMPARISON, parseLayout } from '../layouts.js';
import { schemeRows, schemeTable } from '../schemes.js';
import { columns, int, partsSuffix } from '../table.js';

function machineCell(c: LayoutComparison): string {
  return `${c.machineBits} bits${partsSuffix(c.machineParts)}`;
}

function digitsFrom(c: LayoutComparison, digits: number): string {
  const found = c.decimalLengths.find((d) => d.digits === digits);
  return found ? found.from.toISOString() : 'never';
}

/** The comparison as rows: one per figure, one column per layout. */
export function comparisonRows(table: readonly LayoutComparison[]): string[][] {
  const row = (label: string, cell: (c: LayoutComparison) => string) => [label, ...table.map(cell)];
  return [
    row('', (c) => c.name),
    row('time', (c) => `${c.timeBits} bits of ${c.timeUnitMs} ms`),
    row('sequence', (c) => `${c.sequenceBits} bits`),
    row('machine', machineCell),
    row('order below time', (c) => c.fieldOrder),
    row('epoch', (c) => c.epoch.toISOString()),
    // Whole years the layout is guaranteed to last (rounding up would promise too much).
    row('lifetime', (c) => `${Math.floor(c.lifetimeYears)} years`),
    row('ends at', (c) => c.endsAt.toISOString()),
    row('IDs/s per machine', (c) => int(c.idsPerSecond)),
    row('machines', (c) => int(c.machines)),
    row('past 2^53 from', (c) => c.unsafeNumberFrom?.toISOString() ?? 'never'),
    row('18 digits from', (c) => digitsFrom(c, 18)),
    row('19 digits from', (c) => digitsFrom(c, 19)),
  ];
}

const FLAGS = {
  layout: {
    ...OPTIONS.layout,
    multiple: true,
    help: 'a layout to add to the four above; repeatable',
    byDefault: 'none',
  },
  json: { ...OPTIONS.json, help: 'print a JSON array with every figure (dates as ISO strings)' },
  schemes: {
    type: 'boolean',
    help: 'the second table instead: every scheme (UUIDv4, UUIDv7, ULID, segment, Sonyflake, snowflake): bits, order, IDs/s, coordination, what an ID reveals, lifetime, fits BIGINT',
  },
} as const satisfies Flags;

export const compare: Command = defineCommand({
  name: 'compare',
  summary: 'compare layouts side by side: lifetime, end, IDs/s, machines',
  flags: FLAGS,
  usage: `Usage: ids compare [--layout SPEC]... [--json]

Shows, for Sonyflake (2014 and 2025 epochs), Twitter and Discord, and each layout given with
--layout: the field sizes, how long the layout lasts and the instant it ends, IDs per second per
machine, machines, when IDs first pass 2^53 (no longer exact as JS numbers), and when they reach
18 and 19 decimal digits.`,
  positionals: false,
  async run({ values }, io) {
    if (values.schemes) {
      const schemes = schemeTable();
      await print(
        io.stdout,
        values.json ? `${JSON.stringify(schemes, null, 2)}\n` : columns(schemeRows(schemes)),
      );
      return 0;
    }
    const specs = [...DEFAULT_COMPARISON, ...(values.layout ?? [])];
    const layouts = specs.map((spec) => {
      const { label, layout } = parseLayout(spec);
      return { ...layout, name: label };
    });
    const table = compareLayouts(layouts);
    if (values.json) {
      await print(io.stdout, `${JSON.stringify(table, null, 2)}\n`);
      return 0;
    }
    await print(io.stdout, columns(comparisonRows(table)));
    return 0;
  },
});
