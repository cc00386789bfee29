// The snowflake presets: named layouts. Adding a preset is adding its layout and an entry to
// SNOWFLAKE_PRESETS, in this file only.
import { defineLayout, type Layout } from '@ids/engine';

/** Twitter's epoch, 2010-11-04T01:42:54.657Z, in Unix ms (also bwmarrin/snowflake's default). */
export const TWITTER_EPOCH = 1288834974657;
/** Discord's epoch, 2015-01-01T00:00:00.000Z, in Unix ms. */
export const DISCORD_EPOCH = 1420070400000;
/**
 * Twitter's snowflake layout: 41-bit time in ms, a 10-bit machine field (datacenter 5 + worker
 * 5) above a 12-bit sequence. The same bits as bwmarrin/snowflake's defaults.
 */
export const TWITTER_LAYOUT: Layout = defineLayout({
  name: 'twitter',
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 12,
  machineBits: 10,
  epochMs: TWITTER_EPOCH,
  fieldOrder: 'machine-sequence',
  machineParts: [
    { name: 'datacenter', bits: 5 },
    { name: 'worker', bits: 5 },
  ],
});

/**
 * Discord's layout: Twitter's bits (worker 5 + process 5, a 12-bit increment) from 2015-01-01.
 * Discord documents a 42-bit time field; its top bit stays 0 until 2084-09-06, and this layout
 * ends there, keeping every ID a positive signed 64-bit integer.
 */
export const DISCORD_LAYOUT: Layout = defineLayout({
  name: 'discord',
  timeBits: 41,
  timeUnitMs: 1,
  sequenceBits: 12,
  machineBits: 10,
  epochMs: DISCORD_EPOCH,
  fieldOrder: 'machine-sequence',
  machineParts: [
    { name: 'worker', bits: 5 },
    { name: 'process', bits: 5 },
  ],
});

/**
 * The named layouts of the `preset` setting, by name: the one table that the setting's type, its
 * error message and the CLI's layout list are read from, so a new preset is an entry here.
 */
export const SNOWFLAKE_PRESETS = {
  /** TWITTER_LAYOUT: datacenter 5 + worker 5 bits from 2010-11-04 (the default). */
  twitter: TWITTER_LAYOUT,
  /** DISCORD_LAYOUT: worker 5 + process 5 bits from 2015-01-01. */
  discord: DISCORD_LAYOUT,
} as const satisfies Readonly<Record<string, Layout>>;

/** A name the `preset` setting takes: a key of SNOWFLAKE_PRESETS ('twitter', 'discord'). */
export type SnowflakePreset = keyof typeof SNOWFLAKE_PRESETS;
