// @ids/snowflake: Twitter's snowflake, Discord's, and bwmarrin-style custom layouts, as presets
// over the one @ids/engine generator.
import { layoutIdFunctions } from '@ids/engine/internal';
import { TWITTER_LAYOUT } from './presets.js';

// What a Snowflake user needs, and no more: the class and its settings, the presets, package
// functions over the default layout, and what every flavour passes on from the engine (see
// @ids/engine/flavour: the encodings, the test clock, shared state, the errors a caller acts on).
export * from '@ids/engine/flavour';
export { DISCORD_LAYOUT, SNOWFLAKE_PRESETS, type SnowflakePreset, TWITTER_LAYOUT } from './presets.js';
export { type SnowflakeSettings, snowflakeLayout } from './settings.js';
export { MachineIdRequiredError, Snowflake } from './snowflake.js';

// Package functions over the default (twitter) layout, as @ids/sonyflake has for its default.
// A Snowflake of another layout has the same methods for its own.

const twitter = layoutIdFunctions(TWITTER_LAYOUT);

/** Splits a Twitter-layout ID into `{ id, time, sequence, machine, parts: { datacenter, worker } }` (time in ms since the epoch). */
export const decompose = twitter.decompose;

/** The Twitter-layout ID for an instant, a sequence (0..4095) and a machine ID (0..1023). */
export const compose = twitter.compose;

/** The millisecond a Twitter-layout ID was issued in. */
export const toTime = twitter.toTime;
