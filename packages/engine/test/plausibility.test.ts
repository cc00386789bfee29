import { describe, expect, it } from 'vitest';
import { defineLayout } from '../src/layout.js';
import { NAMED_LAYOUTS } from '../src/named-layouts.js';
import { FUTURE_SLACK_MS, implausibility, NEAR_EPOCH_MS, plausibleLayouts } from '../src/plausibility.js';
import { SONYFLAKE_SPEC } from './layouts.js';

const SONYFLAKE = defineLayout(SONYFLAKE_SPEC);
const DISCORD = defineLayout({
  name: 'discord',
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 12,
  machineBits: 10,
  fieldOrder: 'machine-sequence',
  epochMs: 1420070400000,
});
// The example ID of Discord's API reference: 2016-04-30T11:18:25.796Z as Discord reads it.
const DISCORD_ID = 175928847299117063n;
const NOW = Date.UTC(2026, 10, 26, 12);

describe('implausibility: a reading is believable from a day after the epoch to a minute from now', () => {
  it('finds a Discord ID plausible both as Discord (2016) and as Sonyflake (2017)', () => {
    expect(implausibility(DISCORD, DISCORD_ID, NOW)).toBeUndefined();
    expect(implausibility(SONYFLAKE, DISCORD_ID, NOW)).toBeUndefined();
  });

  it('allows a time up to FUTURE_SLACK_MS ahead of the clock it is given, not a millisecond more', () => {
    const start = Date.UTC(2016, 3, 30, 11, 18, 25, 796);
    expect(implausibility(DISCORD, DISCORD_ID, start - FUTURE_SLACK_MS)).toBeUndefined();
    expect(implausibility(DISCORD, DISCORD_ID, start - FUTURE_SLACK_MS - 1)).toBe(
      'its time, 2016-04-30T11:18:25.796Z, is in the future',
    );
  });

  it('rejects a time within NEAR_EPOCH_MS of the epoch ("hello" in base36 is 10 ms into Sonyflake), not a tick later', () => {
    // 29234652 = "hello" in base36: tick 1 of 10 ms, sequence 0x01, machine 0x12dc.
    expect(implausibility(SONYFLAKE, 29234652n, NOW)).toBe(
      "its time, 2014-09-01T00:00:00.010Z, is within a day of the layout's epoch: more likely a small number than an ID",
    );
    const firstTick = BigInt(NEAR_EPOCH_MS / 10);
    const shift = BigInt(SONYFLAKE.sequenceBits + SONYFLAKE.machineBits);
    expect(implausibility(SONYFLAKE, (firstTick << shift) - 1n, NOW)).toMatch(/within a day/);
    expect(implausibility(SONYFLAKE, firstTick << shift, NOW)).toBeUndefined();
  });

  it('rejects an ID wider than the layout, and any ID of a layout whose epoch has not come', () => {
    const narrow = defineLayout({ ...SONYFLAKE, name: 'narrow', timeBits: 20 });
    expect(implausibility(narrow, DISCORD_ID, NOW)).toBe('it has bits set above the 44 bits the layout uses');
    const later = defineLayout({ ...SONYFLAKE, name: 'later', epochMs: Date.UTC(2030, 0, 1) });
    expect(implausibility(later, 1n, NOW)).toBe(
      "today is before the layout's epoch (2030-01-01T00:00:00.000Z): no ID of it can exist yet",
    );
  });
});

describe('plausibleLayouts: the layouts an ID may have come from', () => {
  it('keeps the entries whose layout dates the ID plausibly, in their order, and leaves the others', () => {
    const all = Object.values(NAMED_LAYOUTS);
    // Sonyflake v2 would date it in 2028, after NOW.
    expect(plausibleLayouts(DISCORD_ID, NOW, all).map((entry) => entry.name)).toEqual([
      'sonyflake',
      'twitter',
      'discord',
    ]);
    // Judged against the clock it is given: before 2016-04-30 the Discord reading is in the future.
    expect(plausibleLayouts(DISCORD_ID, Date.UTC(2016, 0, 1), all).map((entry) => entry.name)).toEqual([
      'twitter',
    ]);
    const narrow = { layout: defineLayout({ ...SONYFLAKE, name: 'narrow', timeBits: 20 }) };
    expect(plausibleLayouts(DISCORD_ID, NOW, [narrow])).toEqual([]);
  });
});
