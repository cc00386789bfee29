// Shared measuring tools. Everything a figure depends on is measured in the same run, since
// throughput of CPU-bound code moves 25-45% between runs on these 2-core machines.

/** Runs `fn` and returns what it returned plus wall seconds and CPU seconds (user + system). */
export function timed(fn) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = fn();
  return finish(value, t0, cpu0);
}

export async function timedAsync(fn) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  return finish(value, t0, cpu0);
}

function finish(value, t0, cpu0) {
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { value, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/**
 * Watches the event loop with a 1 ms interval while `fn` runs: how long the loop went without
 * turning (the longest gap between beats) and how many beats it managed.
 */
export async function watchLoop(fn) {
  let last = performance.now();
  let longestGapMs = 0;
  let beats = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    beats++;
  }, 1);
  try {
    const value = await fn();
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    return { value, longestGapMs, beats };
  } finally {
    clearInterval(timer);
  }
}

/** The same watch over an idle loop for `ms`: what the machine alone costs. */
export function idleLoop(ms) {
  return watchLoop(() => new Promise((resolve) => setTimeout(resolve, ms)));
}

/** Duplicates in a list of IDs, and whether they are strictly increasing. */
export function audit(ids) {
  let increasing = true;
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) increasing = false;
  return { duplicates: ids.length - new Set(ids).size, increasing };
}

/** Calls `next` (sync) until `seconds` pass, collecting IDs; checks the clock every 256 calls. */
export function drainSync(next, seconds) {
  const ids = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) for (let i = 0; i < 256; i++) ids.push(next());
  return ids;
}

/** The same through an async `next`, one awaited call at a time (a saturated caller). */
export async function drainAsync(next, seconds) {
  const ids = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) for (let i = 0; i < 256; i++) ids.push(await next());
  return ids;
}

/**
 * The share of the ceiling a run used: IDs issued over the slots of every tick from the first
 * ID's tick to the last one's. Wall-clock IDs/s over a window overshoots the ceiling by the
 * partial ticks at its ends; counting slots does not.
 */
export function ceilingShare(generator, ids) {
  const first = generator.decompose(ids[0]).time;
  const last = generator.decompose(ids.at(-1)).time;
  return ids.length / ((last - first + 1) * (generator.layout.maxSequence + 1));
}

export function formatTable(headers, rows) {
  const cells = [headers, ...rows].map((row) => row.map(String));
  const widths = headers.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row) => `| ${row.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`;
  return [
    line(cells[0]),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

export const fmt = {
  int: (n) => Math.round(n).toLocaleString('en-US'),
  pct: (n) => `${(n * 100).toFixed(2)}%`,
  ms: (n) => n.toFixed(1),
  s: (n) => n.toFixed(3),
};

/**
 * `count` claims one after another with one provider, each held until the end (as a fleet holds
 * them, so the field fills meanwhile), then all released; the claim times in ms, sorted.
 * @param {(context: { bits: number }) => Promise<{ release(): unknown }>} provider
 * @param {number} count
 */
export async function claimLatencies(provider, count) {
  const times = [];
  const held = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    held.push(await provider({ bits: 10 }));
    times.push(performance.now() - t0);
  }
  await Promise.all(held.map((claim) => claim.release()));
  return times.sort((a, b) => a - b);
}
