import type { Io } from './io.js';

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
  return {
    update(done) {
      const t = now();
      if (t - drawnAt < intervalMs && done < total) return;
      drawnAt = t;
      drawn = true;
      const filled = Math.floor((done / total) * width);
      const percent = Math.floor((done / total) * 100);
      stderr.write(
        `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percent).padStart(3)}% ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} IDs`,
      );
    },
    finish() {
      // Erase the bar so the terminal is left as it was.
      if (drawn) stderr.write('\r\x1b[K');
    },
  };
}
