// @ids/snowflake against the npm snowflake peers, in one run, each generator in a child process
// of its own (snowflake-child.mjs) so that none inherits another's JIT state or heap.
//  1. At the 4,096,000 IDs/s ceiling (Twitter layout): IDs/s, share of the ceiling's slots,
//     duplicates, order, CPU seconds per million IDs (a busy-waiting generator burns a core),
//     and for our async paths the longest event-loop gap next to the idle one.
//  2. The raw cost of one ID: ours with a layout whose ceiling never binds (22-bit sequence)
//     against each peer's cost per ID in a tight loop.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, formatTable } from './lib/measure.mjs';

const child = join(dirname(fileURLToPath(import.meta.url)), 'snowflake-child.mjs');
const PEERS = ['flake-idgen', 'snowflakify', '@sapphire/snowflake', 'nodejs-snowflake'];

function measure(which, seconds) {
  const run = spawnSync(process.execPath, [child, which, String(seconds)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (run.status !== 0) throw new Error(`benchmark case ${which} failed (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '');
}

export async function benchSnowflake({ seconds = 2 } = {}) {
  const sync = measure('ids-sync', seconds);
  const async_ = measure('ids-async', seconds);
  const batch = measure('ids-batch', seconds);
  const asyncFloor = measure('ids-async-floor', seconds);
  const raw = measure('ids-raw', seconds);
  const floor = measure('ids-floor', seconds);
  const peers = PEERS.map((name) => measure(name, seconds));

  const gap = (r) =>
    r.gapMs === undefined ? 'blocks by design' : `${fmt.ms(r.gapMs)} ms (idle ${fmt.ms(r.idleGapMs)} ms)`;
  const ceiling = (r) => `${fmt.int((r.perMs ?? 4096) * 1000)}`;
  const atCeiling = formatTable(
    [
      'generator',
      'ceiling IDs/s',
      'IDs/s',
      '% of ceiling (slots used)',
      'duplicates',
      'increasing',
      'CPU s per 1M IDs',
      'longest event-loop gap',
    ],
    [sync, async_, batch, ...peers].map((r) => [
      r.name,
      ceiling(r),
      fmt.int(r.idsPerSecond),
      fmt.pct(r.share),
      fmt.int(r.duplicates),
      r.increasing ? 'yes' : 'NO',
      fmt.s(r.cpuSecondsPerMillion),
      gap(r),
    ]),
  );

  const rawRows = [raw, floor, ...peers]
    .map((r) => ({ ...r, ratio: r.nsPerId / raw.nsPerId }))
    .map((r) => [
      r.name,
      r.nsPerId.toFixed(1),
      r.cpuNsPerId.toFixed(1),
      fmt.int(1e9 / r.nsPerId),
      `${r.ratio.toFixed(2)}x`,
      fmt.int(r.duplicates),
    ]);
  const rawTable = formatTable(
    ['generator', 'ns per ID', 'CPU ns per ID', 'IDs/s', 'time vs ours', 'duplicates'],
    rawRows,
  );

  const flake = peers.find((r) => r.name === 'flake-idgen');
  const fastest = peers.reduce((a, b) => (b.nsPerId < a.nsPerId ? b : a));
  // A peer that repeats IDs is not a fair comparison for cost: the fastest one that does not.
  const correct = peers.filter((r) => r.duplicates === 0);
  const fastestCorrect =
    correct.length === 0 ? undefined : correct.reduce((a, b) => (b.nsPerId < a.nsPerId ? b : a));
  const verdict = [
    `nextIdSync(): ${fmt.pct(sync.share)} of the ceiling's slots (target >= 99%), ${sync.duplicates} duplicates,`,
    `${fmt.s(sync.cpuSecondsPerMillion)} CPU s per 1M IDs against flake-idgen's ${fmt.s(flake.cpuSecondsPerMillion)} (${(flake.cpuSecondsPerMillion / sync.cpuSecondsPerMillion).toFixed(1)}x less CPU).`,
    `One awaiting caller can reach at most ${fmt.int(asyncFloor.idsPerSecond)} IDs/s here (${fmt.pct(asyncFloor.share)} of the ceiling; ${asyncFloor.cpuNsPerId.toFixed(1)} CPU ns per ID for an await of one clock read + one compose, no generator): nextId() reaches ${fmt.pct(async_.idsPerSecond / asyncFloor.idsPerSecond)} of that bound.`,
    `nextId(): ${fmt.pct(async_.share)}, nextIds(4096): ${fmt.pct(batch.share)} of the ceiling's slots (target >= 98%); longest event-loop gaps ${fmt.ms(async_.gapMs)} and ${fmt.ms(batch.gapMs)} ms against ${fmt.ms(async_.idleGapMs)} ms idle (target <= idle + 5 ms).`,
    `Raw cost against the floor measured in this run: ${raw.nsPerId.toFixed(1)} ns per ID against ${floor.nsPerId.toFixed(1)} ns (${(raw.nsPerId / floor.nsPerId).toFixed(2)}x; CPU ${raw.cpuNsPerId.toFixed(1)} vs ${floor.cpuNsPerId.toFixed(1)} ns, ${(raw.cpuNsPerId / floor.cpuNsPerId).toFixed(2)}x; target <= 1.4x).${fastestCorrect ? ` Fastest correct peer: ${fastestCorrect.name}, ${fastestCorrect.nsPerId.toFixed(1)} ns.` : ''}`,
    `Raw cost: ${raw.nsPerId.toFixed(1)} ns per ID (${raw.cpuNsPerId.toFixed(1)} CPU ns) against the fastest peer, ${fastest.name}, at ${fastest.nsPerId.toFixed(1)} ns (${fastest.cpuNsPerId.toFixed(1)} CPU ns${fastest.duplicates > 0 ? `; ${fmt.int(fastest.duplicates)} of its IDs repeat` : ''}).`,
    'On a busy machine wall times include time the process was not running; CPU ns per ID does not.',
  ].join('\n');

  return {
    title: `Snowflake (41-bit ms time, 12-bit sequence): ${fmt.int(4_096_000)} IDs/s ceiling; peers in the same run, ${seconds} s per generator, each in its own process`,
    table: `${atCeiling}\n\nRaw cost of one ID (1 s tight loop after a ${300} ms warm-up; ours with a 22-bit sequence, whose ceiling never binds; flake-idgen, snowflakify and nodejs-snowflake include their waits at 4096 or 1024 per ms):\n\n${rawTable}\n\n${verdict}`,
  };
}
