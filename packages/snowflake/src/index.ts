// @ids/snowflake: Twitter's snowflake, Discord's, and bwmarrin-style custom layouts, as presets
// over the one @ids/engine generator.
import {
  compose as composeId,
  type DecomposedId,
  decompose as decomposeId,
  type IdInput,
  toTime as idTime,
} from '@ids/engine';
import { TWITTER_LAYOUT } from './settings.js';

export {
  AmbiguousIdError,
  AsyncSettingError,
  type Clock,
  ClockMovedBackwardsError,
  composeMachineId,
  createSharedState,
  type DecomposedId,
  decodeAnyId,
  decodeId,
  ENCODING_NAMES,
  ENCODINGS,
  type EncodingName,
  encodeId,
  FakeClock,
  formatId,
  GeneratorClosedError,
  type IdInput,
  IdsError,
  InvalidArgumentError,
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidIdError,
  InvalidLayoutError,
  InvalidMachineIdError,
  InvalidSequenceError,
  InvalidStartTimeError,
  idFromBytes,
  idReplacer,
  idToBytes,
  type Layout,
  layoutLimits,
  MAX_ID,
  type MachineIdCheck,
  type MachineIdClaim,
  MachineIdLostError,
  type MachineIdProvider,
  MachineIdProviderError,
  MachineIdRejectedError,
  type MachineIdSource,
  monotonicClock,
  OverTimeLimitError,
  parseId,
  type SharedGeneratorState,
  SharedStateCell,
  StartTimeAheadError,
  type StateCell,
  sharedStateCell,
  wallClock,
} from '@ids/engine';
export {
  DEFAULT_NODE_BITS,
  DEFAULT_STEP_BITS,
  DISCORD_EPOCH,
  DISCORD_LAYOUT,
  MAX_NODE_STEP_BITS,
  type SnowflakePreset,
  type SnowflakeSettings,
  snowflakeLayout,
  TWITTER_EPOCH,
  TWITTER_LAYOUT,
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
