// Warnings for `ids decompose` without --layout or --format: an ID read in the default layout,
// or in an encoding guessed from its characters, can look fine and be wrong (a Twitter ID read as
// a Sonyflake one is dated 2054; a typo reads as base36). The numbers are still printed: these
// are warnings on stderr, naming what to try.
import { decompose, type Layout, toTime } from '@ids/engine';
import type { Io } from './io.js';
import { LAYOUT_NAMES, parseLayout } from './layouts.js';

/** A time this far past the clock is not one an ID was issued at (clocks disagree by less). */
const FUTURE_SLACK_MS = 60_000;

/** The named layouts that read `id` as issued at or before now (and that can hold it at all). */
export function plausibleLayouts(id: bigint, now: number): string[] {
  return LAYOUT_NAMES.filter((name) => {
    try {
      const { layout } = parseLayout(name);
      decompose(layout, id);
      return toTime(layout, id).getTime() <= now + FUTURE_SLACK_MS;
    } catch {
      return false;
    }
  });
}

/** Warns when `id`, read in the default layout, is dated in the future, naming the layouts to try. */
export function warnImplausibleTime(
  io: Io,
  input: string,
  id: bigint,
  layout: Layout,
  label: string,
  now = Date.now(),
): void {
  const time = toTime(layout, id).getTime();
  if (time <= now + FUTURE_SLACK_MS) return;
  const others = plausibleLayouts(id, now).filter((name) => name !== label);
  const hint = others.length > 0 ? `; try --layout ${others.join(' or --layout ')}` : '';
  io.stderr.write(
    `ids decompose: warning: ${input} read as ${label} is dated ${new Date(time).toISOString()}, in the future${hint}\n`,
  );
}

/** Notes an ID whose encoding was guessed from its characters (not digits, no --format). */
export function noteGuessedEncoding(io: Io, input: string, encoding: string): void {
  if (encoding === 'decimal' || encoding === 'decimal-fixed') return;
  io.stderr.write(
    `ids decompose: note: read ${JSON.stringify(input)} as ${encoding}, the only encoding that reads it; pass --format ${encoding} to say so, or check it for a typo\n`,
  );
}
