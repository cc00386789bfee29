// A generator's settings, and the one place they are checked: `checkGeneratorOptions` (or a
// preset, through `checkSettings` and `checkSequenceBound`) turns what a user gave into a
// CheckedGeneratorOptions, the only thing IdGenerator takes, so nothing is checked twice.
import { checkInteger, checkNonNegative, checkOnError, checkStateCell } from './check.js';
import { type Clock, clockOption } from './clock.js';
import { checkSameMachineId, type SameMachineIdSetting } from './duplicate-guard.js';
import { checkMachineId } from './id.js';
import type { Layout } from './layout.js';
import { idOf, type MachineIdClaim } from './machine.js';
import type { GeneratorState } from './state.js';

/** Default for `maxClockBackwardMs`: NTP corrections are usually well under a second. */
export const DEFAULT_MAX_CLOCK_BACKWARD_MS = 1000;

/**
 * Where a generator keeps its state. By default the generator holds it; a cell in shared memory
 * lets the threads of one process share one machine ID (each thread's generator takes slots
 * from the same cell).
 */
export interface StateCell {
  /** The current state: the last tick used and the last sequence given in it. */
  load(): GeneratorState;
  /**
   * Stores `next` only if the state is still `prev`, and says whether it did, so that
   * concurrent takers retry instead of sharing a slot. May throw instead (a fenced shared cell
   * does): the error is what the generator's call fails with.
   */
  commit(prev: GeneratorState, next: GeneratorState): boolean;
  /**
   * How many slots of one tick a generator may take per commit (default 1). The generator hands
   * the extra slots out itself, one per call, each only once the clock is in their tick; a
   * shared cell uses this so that threads contend once per batch instead of once per ID.
   */
  readonly reservation?: number;
  /**
   * Called before the generator hands out a slot it reserved earlier (see `reservation`), with
   * the clock's reading: throws when the state was fenced, or its holder's claim can no longer
   * be trusted at that time.
   */
  check?(nowMs: number): void;
  /**
   * Called by the generator holding the claim with until when (Unix ms) the claim is certainly
   * held (see MachineIdClaim.trustedForMs); a shared cell makes every taker's `check` refuse past it.
   */
  trustUntil?(untilMs: number): void;
  /**
   * Called with the generator's layout and machine ID when it takes a machine ID (at
   * construction, and when it adopts a renewed claim). A cell made for another layout or
   * machine ID throws, since its slots would mean other IDs.
   */
  attach?(layout: Layout, machineId: number): void;
  /**
   * Called when the generator stops holding its claim (the claim was lost, or the generator was
   * closed), before it records its last tick. A shared cell then fails every other taker's
   * commit, so no thread issues an ID under a machine ID that is no longer held. Also called
   * with the OverTimeLimitError when a taker reads a time past the layout's end: every taker
   * fails from then on, as Go does (without `fence`, the state moves to the layout's last slot).
   */
  fence?(error: Error): void;
}

/**
 * The options every generator on this engine takes besides its layout and machine ID.
 * `SonyflakeSettings` and `SnowflakeSettings` extend these.
 */
export interface GeneratorSettings extends SameMachineIdSetting {
  /** Where time comes from (`now()` in Unix ms). Default: the wall clock (`wallClock`, sub-ms). */
  readonly clock?: Clock;
  /**
   * How far, in ms, the clock may be behind the tick the generator must use next before a call
   * fails with ClockMovedBackwardsError instead of waiting. Default 1000; 0 never waits for a
   * clock that went back; Infinity waits as long as it takes (Go's behaviour).
   * @throws InvalidArgumentError at construction for a negative number, NaN or a non-number.
   */
  readonly maxClockBackwardMs?: number;
  /**
   * Start each new tick's sequence at a random value below this bound instead of 0, so that IDs
   * at low traffic do not all end in sequence 0 (Leaf uses 100). The ticks then hold on average
   * (bound - 1) / 2 fewer IDs. Default: off (0, as in Go). Range: an integer from 0 to 2^sequenceBits.
   * @throws InvalidArgumentError at construction for anything else.
   */
  readonly randomSequenceBound?: number;
  /** Receives errors from recording a claim's time and from renewing a lost claim. Default: a process warning. */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the generator keeps its state. Default: in the generator. Pass
   * `sharedStateCell(createSharedState(layout, machineId))`, one state handed to each worker
   * thread, to let the threads of a process share one machine ID; the generator's layout and
   * machine ID must then be the shared state's, else InvalidArgumentError. See StateCell.
   */
  readonly state?: StateCell;
}

/**
 * What `checkGeneratorOptions` checks: the settings and the layout and machine ID they go with.
 * Sonyflake and Snowflake make theirs from their own settings (see `presetClass`).
 */
export interface GeneratorOptions extends GeneratorSettings {
  /** The bit layout, from `defineLayout` (validated data: not checked again). */
  readonly layout: Layout;
  /**
   * The machine ID, already resolved (`resolveMachineId` runs providers and checks): a number, or
   * a claim the generator watches. Must be an integer in [0, 2^machineBits), else
   * InvalidMachineIdError (and a renewed claim outside it is released).
   */
  readonly machineId: number | MachineIdClaim;
}

/** The generator settings after `checkSettings`: each read and checked once, defaults applied. */
export interface CheckedSettings {
  readonly clock: Clock;
  readonly maxClockBackwardMs: number;
  readonly onError: (error: unknown) => void;
  readonly state: StateCell | null;
  readonly sameMachineId: 'allow' | 'refuse';
  /** Checked by `checkSequenceBound`, once the layout (its sequence width) is known. */
  readonly randomSequenceBound: unknown;
}

/**
 * The settings an IdGenerator runs on, each checked once. Only `checkGeneratorOptions` and the
 * presets make one (the class itself is not exported, only its type): the private field makes
 * the type nominal, so an object literal is not one, and the generator trusts it as it is.
 */
export class CheckedGeneratorOptions {
  readonly #checked = true;
  /** The bit layout. */
  readonly layout: Layout;
  /** The machine ID, its range checked: a number, or a claim the generator watches. */
  readonly machineId: number | MachineIdClaim;
  /** The clock, checked (`now()` answered a finite number). */
  readonly clock: Clock;
  /** How far, in ms, the clock may go back before a call fails (0 or more). */
  readonly maxClockBackwardMs: number;
  /** Each fresh tick starts below this sequence (0: off). */
  readonly randomSequenceBound: number;
  /** Where errors of recording and renewing a claim go. */
  readonly onError: (error: unknown) => void;
  /** The state cell, or null for the generator's own state. */
  readonly state: StateCell | null;
  /** Whether a second live generator with this layout and machine ID is allowed. */
  readonly sameMachineId: 'allow' | 'refuse';

  constructor(settings: CheckedSettings, layout: Layout, bound: number, machineId: number | MachineIdClaim) {
    this.layout = layout;
    this.machineId = machineId;
    this.clock = settings.clock;
    this.maxClockBackwardMs = settings.maxClockBackwardMs;
    this.randomSequenceBound = bound;
    this.onError = settings.onError;
    this.state = settings.state;
    this.sameMachineId = settings.sameMachineId;
  }

  /** Whether a value is checked options (presets take either these or their own settings). */
  static is(value: unknown): value is CheckedGeneratorOptions {
    return typeof value === 'object' && value !== null && #checked in value;
  }
}

/**
 * Checks the settings that do not depend on the layout, in this order: onError, state, clock,
 * maxClockBackwardMs, sameMachineId. Each is read once. Presets run this before they build
 * their layout (a start time is checked against the clock) and before any machine ID is
 * claimed, so a bad setting never leaves a claim taken.
 * @throws InvalidArgumentError naming the setting, what was expected and what was received.
 */
export function checkSettings(settings: GeneratorSettings): CheckedSettings {
  const { onError, state, clock, maxClockBackwardMs, sameMachineId, randomSequenceBound } = settings;
  return {
    onError: checkOnError(onError),
    state: checkStateCell(state),
    clock: clockOption(clock),
    maxClockBackwardMs: checkNonNegative(
      maxClockBackwardMs ?? DEFAULT_MAX_CLOCK_BACKWARD_MS,
      'maxClockBackwardMs',
    ),
    sameMachineId: checkSameMachineId(sameMachineId),
    randomSequenceBound,
  };
}

/** `randomSequenceBound`, once the layout (its sequence width) is known: 0 (off) to 2^sequenceBits. */
export function checkSequenceBound(settings: CheckedSettings, layout: Layout): number {
  return checkInteger(
    settings.randomSequenceBound ?? 0,
    'randomSequenceBound (0 = off)',
    0,
    layout.maxSequence + 1,
  );
}

/**
 * Checks a generator's options once, for `new IdGenerator(checkGeneratorOptions({ layout,
 * machineId, ...settings }))`: the settings (see `checkSettings`), the machine ID's range, then
 * `randomSequenceBound`.
 * @throws InvalidArgumentError for a bad setting; InvalidMachineIdError for a machine ID
 * outside [0, 2^machineBits).
 */
export function checkGeneratorOptions(options: GeneratorOptions): CheckedGeneratorOptions {
  const settings = checkSettings(options);
  const { layout, machineId } = options;
  checkMachineId(layout, idOf(machineId));
  return new CheckedGeneratorOptions(settings, layout, checkSequenceBound(settings, layout), machineId);
}
