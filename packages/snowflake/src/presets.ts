// The snowflake presets: the snowflake-family entries of the engine's table of named layouts
// (NAMED_LAYOUTS, packages/engine/src/named-layouts.ts). A new preset is an entry there, which the
// CLI, the server and the inspector page read too.
import { type Layout, NAMED_LAYOUTS, type NamedLayout } from '@ids/engine';

/** Twitter's epoch, 2010-11-04T01:42:54.657Z, in Unix ms (also bwmarrin/snowflake's default). */
export const TWITTER_EPOCH = NAMED_LAYOUTS.twitter.layout.epochMs;
/** Discord's epoch, 2015-01-01T00:00:00.000Z, in Unix ms. */
export const DISCORD_EPOCH = NAMED_LAYOUTS.discord.layout.epochMs;
/**
 * Twitter's snowflake layout: 41-bit time in ms, a 10-bit machine field (datacenter 5 + worker
 * 5) above a 12-bit sequence. The same bits as bwmarrin/snowflake's defaults.
 */
export const TWITTER_LAYOUT: Layout = NAMED_LAYOUTS.twitter.layout;

/**
 * Discord's layout: Twitter's bits (worker 5 + process 5, a 12-bit increment) from 2015-01-01.
 * Discord documents a 42-bit time field; its top bit stays 0 until 2084-09-06, and this layout
 * ends there, keeping every ID a positive signed 64-bit integer.
 */
export const DISCORD_LAYOUT: Layout = NAMED_LAYOUTS.discord.layout;

type Named = typeof NAMED_LAYOUTS;

/** A name the `preset` setting takes: a snowflake-family name of NAMED_LAYOUTS ('twitter', 'discord'). */
export type SnowflakePreset = {
  [K in keyof Named]: Named[K]['family'] extends 'snowflake' ? K : never;
}[keyof Named];

/**
 * The named layouts of the `preset` setting, by name: the one table that the setting's type and
 * its error message are read from, taken from NAMED_LAYOUTS.
 */
export const SNOWFLAKE_PRESETS = Object.freeze(
  Object.fromEntries(
    Object.values<NamedLayout>(NAMED_LAYOUTS)
      .filter((entry) => entry.family === 'snowflake')
      .map((entry) => [entry.name, entry.layout]),
  ),
) as Readonly<Record<SnowflakePreset, Layout>>;
