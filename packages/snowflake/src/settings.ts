import {
  type Clock,
  type GeneratorSettings,
  InvalidArgumentError,
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidLayoutError,
  type Layout,
  type MachineIdCheck,
  type MachineIdSource,
} from '@ids/engine';
import {
  checkInteger,
  checkSettingsObject,
  checkStartTime,
  clockOption,
  defineCheckedFields,
  received,
} from '@ids/engine/internal';
import { SNOWFLAKE_PRESETS, type SnowflakePreset } from './presets.js';

/** bwmarrin/snowflake's default NodeBits. */
export const DEFAULT_NODE_BITS = 10;
/** bwmarrin/snowflake's default StepBits. */
export const DEFAULT_STEP_BITS = 12;
/** bwmarrin's rule: node and step bits share 22 bits, so the time field keeps at least 41. */
export const MAX_NODE_STEP_BITS = 22;

/**
 * Settings of a Snowflake. Everything is validated at construction, in the order listed.
 */
export interface SnowflakeSettings extends GeneratorSettings {
  /**
   * A name of SNOWFLAKE_PRESETS. 'twitter' (default): datacenter 5 + worker 5 bits, epoch
   * TWITTER_EPOCH. 'discord': worker 5 + process 5 bits, epoch DISCORD_EPOCH. Both: 41-bit ms
   * time, 12-bit sequence. Cannot be combined with nodeBits/stepBits (InvalidArgumentError);
   * another name is InvalidArgumentError.
   */
  readonly preset?: SnowflakePreset;
  /**
   * bwmarrin's NodeBits: giving it (or stepBits) selects a custom layout whose machine field is
   * one `node` of this many bits. Default 10 in that mode; an integer 0..22, else
   * InvalidBitsMachineIdError. The time field gets 63 - nodeBits - stepBits bits (at most 52).
   */
  readonly nodeBits?: number;
  /** bwmarrin's StepBits (the sequence). Default 12 in that mode; 0..22, else InvalidBitsSequenceError. nodeBits + stepBits <= 22, else InvalidLayoutError. */
  readonly stepBits?: number;
  /**
   * The instant time 0 stands for, a Date or whole Unix ms. Default: the preset's epoch
   * (TWITTER_EPOCH for custom node/step bits, as bwmarrin). Not after the clock's now
   * (StartTimeAheadError); an invalid date is InvalidStartTimeError.
   */
  readonly epoch?: Date | number;
  /**
   * The machine ID: a number from 0 to 2^machineBits - 1 (1023 by default), a claim, or a
   * provider `({ bits }) => id` (told the field's width; async allowed with `create`). Required,
   * or give machineParts: there is no default, since Go's private-IP rule needs 16 bits and
   * cutting it to 10 makes hosts collide. Missing: MachineIdRequiredError; out of range:
   * InvalidMachineIdError; a failing provider: MachineIdProviderError (cause: its error).
   */
  readonly machineId?: MachineIdSource;
  /**
   * The machine ID as the preset's parts: `{ datacenter, worker }` (twitter) or `{ worker,
   * process }` (discord), each 0..31. Instead of machineId (both: InvalidArgumentError); a part
   * out of range is InvalidMachineIdError.
   */
  readonly machineParts?: Readonly<Record<string, number>>;
  /** Asked once with the machine ID; false means MachineIdRejectedError. */
  readonly checkMachineId?: MachineIdCheck;
}

function bitsSetting(
  value: unknown,
  fallback: number,
  what: string,
  error: new (message: string) => Error,
): number {
  if (value === undefined) return fallback;
  return checkInteger(
    value,
    `invalid ${what}`,
    0,
    MAX_NODE_STEP_BITS,
    (w, expected) => new error(`${w}: ${expected}`),
  );
}

// A 63-bit time field in ms would end past what a Date can hold; 52 bits last 142,000 years.
const MAX_TIME_BITS = 52;

/**
 * The layout for the settings: a preset, or bwmarrin-style node/step bits; then the epoch
 * (against `settings.clock`). The other settings are the Snowflake class's to check.
 */
export function snowflakeLayout(settings: SnowflakeSettings = {}): Layout {
  const s = checkSettingsObject(settings);
  return layoutWithClock(s, clockOption(s.clock));
}

/** snowflakeLayout for settings whose clock was checked (the Snowflake class checks it with the rest). */
export function layoutWithClock(settings: SnowflakeSettings, clock: Clock): Layout {
  const { preset: presetName, nodeBits: nodeSetting, stepBits: stepSetting, epoch } = settings;
  const custom = nodeSetting !== undefined || stepSetting !== undefined;
  if (custom && presetName !== undefined) {
    throw new InvalidArgumentError(
      `preset ${received(presetName)} cannot be combined with nodeBits/stepBits, which define a layout of their own`,
    );
  }
  const preset = presetName ?? 'twitter';
  if (!Object.hasOwn(SNOWFLAKE_PRESETS, preset)) {
    const names = Object.keys(SNOWFLAKE_PRESETS).map((name) => `'${name}'`);
    throw new InvalidArgumentError(
      `preset: expected ${names.slice(0, -1).join(', ')} or ${names.at(-1)}, received ${received(preset)}`,
    );
  }
  const base: Layout = SNOWFLAKE_PRESETS[preset];
  const epochMs = checkStartTime(epoch ?? base.epochMs, clock, 'epoch');
  if (!custom) {
    // The preset's fields were checked when its layout was defined.
    return epochMs === base.epochMs ? base : defineCheckedFields({ ...base, epochMs });
  }
  const nodeBits = bitsSetting(nodeSetting, DEFAULT_NODE_BITS, 'node bits', InvalidBitsMachineIdError);
  const stepBits = bitsSetting(stepSetting, DEFAULT_STEP_BITS, 'step bits', InvalidBitsSequenceError);
  if (nodeBits + stepBits > MAX_NODE_STEP_BITS) {
    throw new InvalidLayoutError(
      `node and step bits share ${MAX_NODE_STEP_BITS} bits: expected nodeBits + stepBits <= ${MAX_NODE_STEP_BITS}, received ${nodeBits} + ${stepBits} = ${nodeBits + stepBits}`,
    );
  }
  // The field bits were just checked (0..22 each, in ms units).
  return defineCheckedFields({
    name: 'snowflake',
    // bwmarrin shifts the ms count by node + step bits and lets it use the rest of the int64.
    timeBits: Math.min(63 - nodeBits - stepBits, MAX_TIME_BITS),
    timeUnitMs: 1,
    sequenceBits: stepBits,
    machineBits: nodeBits,
    epochMs,
    fieldOrder: 'machine-sequence',
  });
}
