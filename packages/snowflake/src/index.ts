// @ids/snowflake: Twitter's snowflake, Discord's, and bwmarrin-style custom layouts, as presets
// over the one @ids/engine generator.
import {
  compose as composeId,
  type DecomposedId,
  decompose as decomposeId,
  type IdInput,
  toTime as idTime,
} from '@ids/engine';
import { TWITTER_LAYOUT } from './presets.js';

// The engine's whole public API (errors, clocks, encodings, shared state, ...), so nothing a
// Snowflake can throw or take is missing here; this package's own names follow. The package
// functions below (decompose, compose, toTime) take the place of the engine's layout-first ones.
export * from '@ids/engine';
export {
  DISCORD_EPOCH,
  DISCORD_LAYOUT,
  SNOWFLAKE_PRESETS,
  type SnowflakePreset,
  TWITTER_EPOCH,
  TWITTER_LAYOUT,
} from './presets.js';
export {
  DEFAULT_NODE_BITS,
  DEFAULT_STEP_BITS,
  MAX_NODE_STEP_BITS,
  type SnowflakeSettings,
  snowflakeLayout,
} from './settings.js';
export { MachineIdRequiredError, Snowflake } from './snowflake.js';

// Package functions over the default (twitter) layout, as @ids/sonyflake has for its default.
// A Snowflake of another layout has the same methods for its own.

/** Splits a Twitter-layout ID into `{ id, time, sequence, machine, parts: { datacenter, worker } }` (time in ms since the epoch). */
export function decompose(id: IdInput): DecomposedId {
  return decomposeId(TWITTER_LAYOUT, id);
}

/** The Twitter-layout ID for an instant, a sequence (0..4095) and a machine ID (0..1023). */
export function compose(time: Date | number, sequence: number, machine: number): bigint {
  return composeId(TWITTER_LAYOUT, time, sequence, machine);
}

/** The millisecond a Twitter-layout ID was issued in. */
export function toTime(id: IdInput): Date {
  return idTime(TWITTER_LAYOUT, id);
}
