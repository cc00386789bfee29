// @ids/sonyflake: Sony's Sonyflake for Node.js, faithful to Go's sony/sonyflake rules.
import type { IdInput } from '@ids/engine';
import { layoutIdFunctions } from '@ids/engine/internal';
import { GO_V2_START_TIME, sonyflakeLayout } from './settings.js';
import { elapsedMs } from './sonyflake.js';

// What a Sonyflake user needs, and no more: the class and its settings, Go v1's package functions
// over the default layout, and what every flavour passes on from the engine (see
// @ids/engine/flavour: the encodings, the test clock, shared state, the errors a caller acts on).
export * from '@ids/engine/flavour';
export { GO_V2_START_TIME, type SonyflakeSettings, sonyflakeLayout } from './settings.js';
export { Sonyflake } from './sonyflake.js';

/** The default layout: 39-bit time in 10 ms units from 2014-09-01, 8-bit sequence, 16-bit machine. */
export const SONYFLAKE_LAYOUT = sonyflakeLayout({});
/** Go v2's default layout: the same bits, from 2025-01-01. */
export const SONYFLAKE_V2_LAYOUT = sonyflakeLayout({ startTime: GO_V2_START_TIME });

// Go v1 has these as package functions over the default settings; they read IDs of the default
// layout. A Sonyflake built with other settings has the same methods for its own layout.

const sonyflake = layoutIdFunctions(SONYFLAKE_LAYOUT);

/** Splits a default-layout ID into `{ id, time, sequence, machine }` (time in 10 ms ticks). */
export const decompose = sonyflake.decompose;

/** The default-layout ID for an instant, a sequence and a machine ID (Go's Compose checks and errors). */
export const compose = sonyflake.compose;

/** The start of the 10 ms tick a default-layout ID was issued in. */
export const toTime = sonyflake.toTime;

/** ms from the default start time to the tick of the ID (Go v1's ElapsedTime). */
export function elapsedTime(id: IdInput): number {
  return elapsedMs(SONYFLAKE_LAYOUT, decompose(id).time);
}

/** The sequence field of a default-layout ID. */
export function sequenceNumber(id: IdInput): number {
  return decompose(id).sequence;
}

/** The machine field of a default-layout ID. */
export function machineId(id: IdInput): number {
  return decompose(id).machine;
}
