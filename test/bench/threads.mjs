// Four worker threads on one machine ID: their generators share one state in a
// SharedArrayBuffer (Atomics compare-and-exchange), each draining nextIdSync() for the same
// seconds. The figure is the share of the layout's ceiling the four reach together: IDs issued
// over the slots of every tick from the first ID's to the last one's.
import { Worker } from 'node:worker_threads';
import {
  checkGeneratorOptions,
  createSharedState,
  defineLayout,
  IdGenerator,
  tickStartMs,
} from '@ids/engine';
import { SONYFLAKE_LAYOUT } from '@ids/sonyflake';
import { audit, ceilingShare, fmt, formatTable } from './lib/measure.mjs';

// The worker of the integration test (test/threads.test.ts) is the one measured here.
const workerFile = new URL('../fixtures/thread-worker.mjs', import.meta.url);
const THREADS = 4;

/** Runs THREADS workers on one shared state for `seconds`; returns each thread's IDs. */
async function drain(layout, spec, seconds, threads = THREADS) {
  const shared = createSharedState(layout, 1);
  const gate = new SharedArrayBuffer(8);
  const view = new Int32Array(gate);
  const workers = Array.from(
    { length: threads },
    () => new Worker(workerFile, { workerData: { shared, gate, seconds, layout: spec, audit: true } }),
  );
  const results = workers.map(
    (worker) =>
      new Promise((resolve, reject) => {
        worker.once('message', (message) => resolve(message));
        worker.once('error', reject);
      }),
  );
  while (Atomics.load(view, 1) < threads) await new Promise((resolve) => setTimeout(resolve, 5));
  Atomics.store(view, 0, 1);
  Atomics.notify(view, 0);
  const messages = await Promise.all(results);
  await Promise.all(workers.map((worker) => worker.terminate()));
  // Each thread times its own drawing, so handing the IDs back is not counted.
  const wall = Math.max(...messages.map((m) => m.ms)) / 1000;
  return {
    perThread: messages.map((m) => Array.from(m.ids)),
    times: messages.map((m) => m.times),
    errors: messages.filter((m) => m.error !== undefined).map((m) => m.error),
    wall,
  };
}

/** IDs whose tick had not started when their call returned, by the drawing thread's own clock. */
function ahead(layout, perThread, times) {
  const shift = BigInt(layout.sequenceBits + layout.machineBits);
  let count = 0;
  let maxLead = 0;
  perThread.forEach((ids, t) => {
    for (let i = 0; i < ids.length; i++) {
      const lead = tickStartMs(layout, Number(ids[i] >> shift)) - times[t][i];
      if (lead > 0) {
        count++;
        maxLead = Math.max(maxLead, lead);
      }
    }
  });
  return { count, maxLead };
}

function row(label, layout, { perThread, times, errors, wall }, cpuNs) {
  const all = perThread.flat().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const { duplicates } = audit(all);
  const eachIncreasing = perThread.every((ids) => audit(ids).increasing);
  // Read-only (it decomposes the IDs): closed at once, so the next row may make its own.
  const generator = new IdGenerator(checkGeneratorOptions({ layout, machineId: 1 }));
  const share = ceilingShare(generator, all);
  void generator.close();
  const ceiling = ((layout.maxSequence + 1) * 1000) / layout.timeUnitMs;
  const early = ahead(layout, perThread, times);
  return [
    label,
    perThread.length,
    fmt.int(ceiling),
    fmt.int(all.length),
    perThread.map((ids) => fmt.int(ids.length)).join(' / '),
    fmt.int(all.length / wall),
    fmt.pct(share),
    duplicates,
    eachIncreasing ? 'yes' : 'NO',
    fmt.int(early.count),
    errors.length === 0 ? '0' : errors.join(', '),
    cpuNs === undefined ? '' : cpuNs.toFixed(0),
  ];
}

/** CPU ns per ID of the whole process (every thread) over a drain: process.cpuUsage counts all threads. */
async function drainCpu(layout, spec, seconds, threads) {
  const cpu0 = process.cpuUsage();
  const result = await drain(layout, spec, seconds, threads);
  const cpu = process.cpuUsage(cpu0);
  const ids = result.perThread.reduce((n, ids) => n + ids.length, 0);
  return { result, cpuNs: ((cpu.user + cpu.system) * 1000) / ids };
}

export async function benchThreads({ seconds = 3 } = {}) {
  const rows = [];
  const sony = await drainCpu(SONYFLAKE_LAYOUT, undefined, seconds, THREADS);
  rows.push(row('Sonyflake (10 ms, 8-bit sequence)', SONYFLAKE_LAYOUT, sony.result, sony.cpuNs));
  // Snowflake's bits: a 1 ms tick of 4096 IDs, where contention on the shared word shows.
  const spec = { timeBits: 41, timeUnitMs: 1, sequenceBits: 12, machineBits: 10, epochMs: 1288834974657 };
  const snowflake = defineLayout(spec);
  // One second: the threads collect millions of IDs here, and all of them are checked.
  for (const threads of [1, THREADS]) {
    const r = await drainCpu(snowflake, spec, 1, threads);
    rows.push(row('1 ms, 12-bit sequence (snowflake bits)', snowflake, r.result, r.cpuNs));
  }
  return {
    title: `Worker threads on one machine ID (state shared in a SharedArrayBuffer, slots reserved in batches per compare-and-swap), nextIdSync(), ${seconds} s (1 s for the 1 ms layout); "ahead" = IDs whose tick had not started when the call returned, by that thread's clock`,
    table: formatTable(
      [
        'layout',
        'threads',
        'ceiling IDs/s',
        'IDs',
        'per thread',
        'IDs/s together',
        '% of ceiling (slots used)',
        'duplicates',
        'each thread increasing',
        'IDs ahead of tick',
        'errors',
        'CPU ns per ID (process)',
      ],
      rows,
    ),
  };
}
