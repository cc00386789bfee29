// How `ids decompose` reads text it was not told how to read, and what it says about it on
// stderr. Both rules are the engine's, shared with the inspector page: text is an ID only in the
// --format encoding or one its form leaves no doubt about (recognizeId), and a reading is
// plausible when its time lies at least a day after the layout's epoch (NEAR_EPOCH_MS: a time
// closer to the epoch is more likely a word or a small number than an ID) and at most a minute
// from now (FUTURE_SLACK_MS) (implausibility, plausibleLayouts). An ID does not say which layout made it: without --layout
// the default is used, and the other named layouts that date the ID plausibly are named.
import {
  AmbiguousIdError,
  decodeId,
  type EncodingName,
  type Layout,
  NAMED_LAYOUTS,
  type NamedLayout,
  toTimeIn as toTime,
} from '@ids/engine';
import { implausibility, plausibleLayouts, type RecognizedId, recognizeId } from '@ids/engine/read';
import type { Io } from './io.js';

/** The named layouts that read `id` plausibly at `now`, each with the time it gives: "discord (2016-…)". */
function plausibleNamed(id: bigint, now: number): { name: string; text: string }[] {
  return plausibleLayouts(id, now, Object.values<NamedLayout>(NAMED_LAYOUTS)).map(({ name, layout }) => ({
    name,
    text: `${name} (${toTime(layout, id).toISOString()})`,
  }));
}

/**
 * Reads one ID as typed: in the --format encoding, or else only where its form leaves no doubt.
 * @throws AmbiguousIdError naming every reading (encoding, ID, plausible layouts) of text that is
 * not an ID until its encoding is given; InvalidIdError for text no encoding reads.
 */
export function readIdText(input: string, format: EncodingName | undefined, now: number): RecognizedId {
  if (format) return { id: decodeId(input, format), encoding: format, why: 'given with --format' };
  try {
    return recognizeId(input);
  } catch (error) {
    if (!(error instanceof AmbiguousIdError)) throw error;
    const readings = error.candidates.map(({ encoding, id }) => {
      const layouts = plausibleNamed(id, now).map((l) => l.text);
      const where =
        layouts.length === 0 ? 'plausible in no named layout' : `plausible as ${layouts.join(', ')}`;
      return `as ${encoding} ${id}, ${where}`;
    });
    const formats = error.candidates.map((c) => `--format ${c.encoding}`).join(' or ');
    throw new AmbiguousIdError(
      `${JSON.stringify(input)} is not read as an ID without --format (only digits, 16 hex digits and 13 Crockford characters are): it would read ${readings.join('; ')}; pass ${formats} to read it`,
      error.candidates,
    );
  }
}

/** How many IDs of one run are noted as plausible in other layouts: a few typed IDs, not every line of a piped file. */
const MAX_LAYOUT_NOTES = 5;

/**
 * Says on stderr how an ID read in the default layout (no --layout) might be wrong: a warning when
 * that reading is implausible, else a note naming the other layouts that read it plausibly.
 */
export function layoutNotes(
  io: Io,
  label: string,
  layout: Layout,
): (input: string, id: bigint, now: number) => void {
  let notes = 0;
  return (input, id, now) => {
    const problem = implausibility(layout, id, now);
    // Past the last note, a plausible reading costs no look at the other layouts (piped files).
    if (problem === undefined && notes >= MAX_LAYOUT_NOTES) return;
    const others = plausibleNamed(id, now).filter((l) => l.name !== label);
    if (problem !== undefined) {
      const hint =
        others.length > 0
          ? `; try --layout ${others.map((l) => l.name).join(' or --layout ')}`
          : '; no named layout reads it plausibly';
      io.stderr.write(
        `ids decompose: warning: ${input} read as ${label} is implausible: ${problem}${hint}\n`,
      );
    } else if (others.length > 0) {
      notes++;
      const more = notes === MAX_LAYOUT_NOTES ? ' (further IDs of this run are not noted)' : '';
      io.stderr.write(
        `ids decompose: note: ${input} read as ${label}, the default layout (${toTime(layout, id).toISOString()}); also plausible as ${others.map((l) => l.text).join(', ')}; an ID does not say which layout made it: pass --layout to choose${more}\n`,
      );
    }
  };
}
