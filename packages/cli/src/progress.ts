import type { Io } from './io.js';
import { int } from './table.js';

/** Below this many IDs a run is over before a bar would tell anyone anything. */
export const PROGRESS_MIN = 50_000;

export interface Progress {
  update(done: number): void;
  finish(): void;
}

const none: Progress = { update() {}, finish() {} };

/**
 * A progress bar on stderr, only when stderr is a terminal (never in a pipe or a log) and the
 * run is large. Redrawn at most every `intervalMs`; `finish` erases it.
 */
export function progressBar(
  total: number,
  stderr: Io['stderr'],
  { enabled = true, intervalMs = 100, now = () => performance.now() } = {},
): Progress {
  if (!enabled || !stderr.isTTY || total < PROGRESS_MIN) return none;
  let drawnAt = Number.NEGATIVE_INFINITY;
  let drawn = false;
  const width = 30;
  const startedAt = now();
  return {
    update(done) {
      const t = now();
      if (t - drawnAt < intervalMs && done < total) return;
      drawnAt = t;
      drawn = true;
      const filled = Math.floor((done / total) * width);
      const percent = Math.floor((done / total) * 100);
      const seconds = (t - startedAt) / 1000;
      const rate = seconds > 0 ? done / seconds : 0;
      const eta = rate > 0 ? `, ${duration((total - done) / rate)} left` : '';
      stderr.write(
        `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percent).padStart(3)}% ${int(done)} / ${int(total)} IDs, ${int(rate)}/s${eta}\x1b[K`,
      );
    },
    finish() {
      // Erase the bar so the terminal is left as it was.
      if (drawn) stderr.write('\r\x1b[K');
    },
  };
}

/** A duration for a person: 42s, 3m05s, 10h51m, 3d04h. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}
