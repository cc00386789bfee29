// One ID read in one layout, and whether that reading is believable. An ID does not say which
// layout made it; a reading whose time lies in the future, or that needs bits the layout does
// not have, points at the wrong layout, and the page names the ones that read it plausibly.
import { type DecomposedId, decomposeIn as decompose, implausibility, tickStartMs } from '@ids/engine';
import type { NamedLayout } from './layouts.js';

/** An ID in one layout. */
export interface Reading {
  /** The layout it was read in. */
  readonly named: NamedLayout;
  /** Its fields; undefined when the ID does not fit the layout. */
  readonly fields: DecomposedId | undefined;
  /** When its tick started, in Unix ms; undefined when it does not fit. */
  readonly startMs: number | undefined;
  /** Why the reading is implausible; undefined when it is plausible. */
  readonly problem: string | undefined;
}

/** A date as the page writes instants: ISO 8601 in UTC, to the millisecond. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Reads `id` in a layout and judges the reading against `nowMs` (the engine's rule, as in the CLI). */
export function readAs(named: NamedLayout, id: bigint, nowMs: number): Reading {
  const problem = implausibility(named.layout, id, nowMs);
  if (id > named.layout.maxId) return { named, fields: undefined, startMs: undefined, problem };
  const fields = decompose(named.layout, id);
  return { named, fields, startMs: tickStartMs(named.layout, fields.time), problem };
}

/** The readings of `id` in every layout, the chosen one first. */
export function readAll(
  id: bigint,
  chosen: NamedLayout,
  others: readonly NamedLayout[],
  nowMs: number,
): { chosen: Reading; plausible: Reading[] } {
  const plausible = others
    .filter((named) => named.key !== chosen.key)
    .map((named) => readAs(named, id, nowMs))
    .filter((reading) => reading.problem === undefined);
  return { chosen: readAs(chosen, id, nowMs), plausible };
}
