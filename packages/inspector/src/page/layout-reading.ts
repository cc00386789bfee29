// One ID read in one layout, and whether that reading is believable. An ID does not say which
// layout made it; a reading whose time lies in the future, or that needs bits the layout does
// not have, points at the wrong layout, and the page names the ones that read it plausibly. The
// judgement is the engine's (implausibility, plausibleLayouts), the same as the CLI's.
import { type DecomposedId, decomposeIn as decompose, tickStartMs } from '@ids/engine';
import { implausibility, plausibleLayouts } from '@ids/engine/read';
import type { PageLayout } from './layouts.js';

/** An ID in one layout. */
export interface Reading {
  /** The layout it was read in. */
  readonly named: PageLayout;
  /** Its fields; undefined when the ID does not fit the layout. */
  readonly fields: DecomposedId | undefined;
  /** When its tick started, in Unix ms; undefined when it does not fit. */
  readonly startMs: number | undefined;
  /** Why the reading is implausible; undefined when it is plausible. */
  readonly problem: string | undefined;
}

/** Reads `id` in a layout and judges the reading against `nowMs`. */
export function readAs(named: PageLayout, id: bigint, nowMs: number): Reading {
  const problem = implausibility(named.layout, id, nowMs);
  if (id > named.layout.maxId) return { named, fields: undefined, startMs: undefined, problem };
  const fields = decompose(named.layout, id);
  return { named, fields, startMs: tickStartMs(named.layout, fields.time), problem };
}

/** The readings of `id` in the layouts of `among` that read it plausibly, in their order. */
export function plausibleReadings(id: bigint, among: readonly PageLayout[], nowMs: number): Reading[] {
  return plausibleLayouts(id, nowMs, among).map((named) => readAs(named, id, nowMs));
}

/** The reading of `id` in the chosen layout, and its plausible readings in the others. */
export function readAll(
  id: bigint,
  chosen: PageLayout,
  others: readonly PageLayout[],
  nowMs: number,
): { chosen: Reading; plausible: Reading[] } {
  const rest = others.filter((named) => named.name !== chosen.name);
  return { chosen: readAs(chosen, id, nowMs), plausible: plausibleReadings(id, rest, nowMs) };
}
