// Four worker threads on one machine ID: their generators share one state in a
// SharedArrayBuffer (Atomics compare-and-exchange), each draining nextIdSync() for the same
// seconds. The figure is the share of the layout's ceiling the four reach together: IDs issued
// over the slots of every tick from the first ID's to the last one's.
import { Worker } from 'node:worker_threads';
import { createSharedState, defineLayout, IdGenerator } from '@ids/engine';
import { SONYFLAKE_LAYOUT } from '@ids/sonyflake';
import { audit, ceilingShare, fmt, formatTable } from './lib/measure.mjs';

// The worker of the integration test (test/threads.test.ts) is the one measured here.
const workerFile = new URL('../fixtures/thread-worker.mjs', import.meta.url);
const THREADS = 4;

/** Runs THREADS workers on one shared state for `seconds`; returns each thread's IDs. */
async function drain(layout, spec, seconds) {
  const shared = createSharedState(layout, 1);
  const gate = new SharedArrayBuffer(8);
  const view = new Int32Array(gate);
  const workers = Array.from(
    { length: THREADS },
    () => new Worker(workerFile, { workerData: { shared, gate, seconds, layout: spec } }),
  );
  const results = workers.map(
    (worker) =>
      new Promise((resolve, reject) => {
        worker.once('message', (message) => resolve(message));
        worker.once('error', reject);
      }),
  );
  while (Atomics.load(view, 1) < THREADS) await new Promise((resolve) => setTimeout(resolve, 5));
  Atomics.store(view, 0, 1);
  Atomics.notify(view, 0);
  const messages = await Promise.all(results);
  await Promise.all(workers.map((worker) => worker.terminate()));
  // Each thread times its own drawing, so handing the IDs back is not counted.
  const wall = Math.max(...messages.map((m) => m.ms)) / 1000;
  return { perThread: messages.map((m) => Array.from(m.ids)), wall };
}

function row(label, layout, { perThread, wall }) {
  const all = perThread.flat().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const { duplicates } = audit(all);
  const eachIncreasing = perThread.every((ids) => audit(ids).increasing);
  const generator = new IdGenerator({ layout, machineId: 1 });
  const ceiling = ((layout.maxSequence + 1) * 1000) / layout.timeUnitMs;
  return [
    label,
    fmt.int(ceiling),
    fmt.int(all.length),
    perThread.map((ids) => fmt.int(ids.length)).join(' / '),
    fmt.int(all.length / wall),
    fmt.pct(ceilingShare(generator, all)),
    duplicates,
    eachIncreasing ? 'yes' : 'NO',
  ];
}

export async function benchThreads({ seconds = 3 } = {}) {
  const rows = [];
  rows.push(
    row(
      'Sonyflake (10 ms, 8-bit sequence)',
      SONYFLAKE_LAYOUT,
      await drain(SONYFLAKE_LAYOUT, undefined, seconds),
    ),
  );
  // A layout whose ceiling the CPU cannot reach: what four threads contending on one word cost.
  const spec = { timeBits: 41, timeUnitMs: 1, sequenceBits: 12, machineBits: 10, epochMs: 1288834974657 };
  const snowflake = defineLayout(spec);
  // One second: four threads collect millions of IDs here, and all of them are checked.
  rows.push(row('1 ms, 12-bit sequence (snowflake bits)', snowflake, await drain(snowflake, spec, 1)));
  return {
    title: `${THREADS} worker threads on one machine ID (state shared in a SharedArrayBuffer), nextIdSync(), ${seconds} s (1 s for the 1 ms layout)`,
    table: formatTable(
      [
        'layout',
        'ceiling IDs/s',
        'IDs',
        'per thread',
        'IDs/s together',
        '% of ceiling (slots used)',
        'duplicates',
        'each thread increasing',
      ],
      rows,
    ),
  };
}
