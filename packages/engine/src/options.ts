import type { Clock } from './clock.js';
import type { Layout } from './layout.js';
import type { MachineIdClaim } from './machine.js';
import type { SameMachineIdSetting } from './registry.js';
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
 * What an IdGenerator is built from. Sonyflake and Snowflake build these from their own
 * settings after checking the layout and the machine ID; the generator checks the rest at
 * construction, so a bad option fails there and not mid-run.
 */
export interface GeneratorOptions extends GeneratorSettings {
  /** The bit layout, from `defineLayout` (not checked again here). */
  readonly layout: Layout;
  /**
   * The machine ID, already resolved (`resolveMachineId` runs providers and checks): a number, or
   * a claim the generator watches. Must be an integer in [0, 2^machineBits), else
   * InvalidMachineIdError at construction (and a renewed claim outside it is released).
   */
  readonly machineId: number | MachineIdClaim;
}
