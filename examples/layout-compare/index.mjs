// Before committing to a layout for decades: what each one gives. Sonyflake's and the
// snowflake presets, next to a layout of our own (40-bit time in 10 ms units, 11-bit sequence,
// 12-bit machine), compared with compareLayouts from @ids/engine.
import { fileURLToPath } from 'node:url';
import { defineLayout } from '@ids/engine';
import { compareLayouts } from '@ids/engine/read';
import { DISCORD_LAYOUT, TWITTER_LAYOUT } from '@ids/snowflake';
import { SONYFLAKE_LAYOUT, SONYFLAKE_V2_LAYOUT } from '@ids/sonyflake';

export const OURS = defineLayout({
  name: 'ours',
  timeBits: 40,
  timeUnitMs: 10,
  sequenceBits: 11,
  machineBits: 12,
  epochMs: Date.UTC(2025, 0, 1),
});

/** One row per layout: the figures a team argues about, as plain values. */
export function comparison() {
  const layouts = [
    { ...SONYFLAKE_LAYOUT, name: 'sonyflake (2014)' },
    { ...SONYFLAKE_V2_LAYOUT, name: 'sonyflake (2025)' },
    TWITTER_LAYOUT,
    DISCORD_LAYOUT,
    OURS,
  ];
  return compareLayouts(layouts).map((c) => ({
    layout: c.name,
    bits: `${c.timeBits} t x ${c.timeUnitMs} ms / ${c.sequenceBits} seq / ${c.machineBits} machine`,
    years: Math.floor(c.lifetimeYears),
    'ends at': c.endsAt.toISOString(),
    'IDs/s per machine': c.idsPerSecond,
    machines: c.machines,
    'past 2^53 from': c.unsafeNumberFrom?.toISOString().slice(0, 10) ?? 'never',
    '19 digits from':
      c.decimalLengths
        .find((d) => d.digits === 19)
        ?.from.toISOString()
        .slice(0, 10) ?? 'never',
  }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.table(comparison());
}
