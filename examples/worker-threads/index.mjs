// Worker threads of one process sharing ONE machine ID. The main thread takes the machine ID
// with the `auto` chain of @ids/machine-file (and says how), puts the Sonyflake state in a
// SharedArrayBuffer, and starts N worker threads; each builds its own Sonyflake over that state
// and draws IDs. The threads take slots with an atomic compare-and-exchange, so no two threads
// get the same ID, although they all stamp the same machine ID into theirs. The main thread then
// checks every ID, and closes its generator: that stops the threads' generators first, records
// the time reached on the claim, and releases it.
//
//   node index.mjs [--threads 4] [--count 5000]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { layoutLimits } from '@ids/engine';
import { autoMachineId, HostClaim } from '@ids/machine-file';
import {
  createSharedState,
  decompose,
  InvalidArgumentError,
  Sonyflake,
  sharedStateCell,
  sonyflakeLayout,
} from '@ids/sonyflake';

const MAX_THREADS = 64;
const MAX_COUNT = 1_000_000;
const number = new Intl.NumberFormat('en-US');

/** @param {string} name @param {unknown} value @param {number} max */
function checkCount(name, value, max) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(
      `${name}: expected an integer from 1 to ${number.format(max)}, received ${JSON.stringify(value) ?? String(value)}`,
    );
  }
  return value;
}

/**
 * What the main thread checks: no ID drawn twice (by any threads), each thread's IDs strictly
 * increasing, and every ID carrying the one machine ID. Returns the problems found (none: []).
 * @param {readonly (readonly bigint[])[]} perThread @param {number} machineId
 */
export function check(perThread, machineId) {
  /** @type {string[]} */
  const problems = [];
  /** @type {Map<bigint, number>} */
  const drawnBy = new Map();
  perThread.forEach((ids, thread) => {
    ids.forEach((id, i) => {
      const other = drawnBy.get(id);
      if (other !== undefined) problems.push(`ID ${id} was drawn by thread ${other} and thread ${thread}`);
      else drawnBy.set(id, thread);
      const before = ids[i - 1];
      if (before !== undefined && id <= before) {
        problems.push(`thread ${thread}: ID ${id} (#${i}) is not above the ID before it, ${before}`);
      }
      const { machine } = decompose(id);
      if (machine !== machineId) problems.push(`ID ${id} carries machine ${machine}, not ${machineId}`);
    });
  });
  return problems;
}

/**
 * Every thread's first ID is below every other thread's last: they drew at the same time, so the
 * check above is about threads racing for slots, not taking turns.
 * @param {readonly (readonly bigint[])[]} perThread
 */
function overlapped(perThread) {
  const firsts = perThread.map((ids) => ids[0] ?? 0n);
  const lasts = perThread.map((ids) => ids.at(-1) ?? 0n);
  return firsts.every((first) => lasts.every((last) => first <= last));
}

/**
 * Starts the worker threads, opens the gate once all are ready, and collects their IDs.
 * @param {Worker[]} workers where the started threads are put (the caller terminates them)
 * @param {import('@ids/engine').SharedGeneratorState} shared @param {number} threads @param {number} count
 */
async function draw(workers, shared, threads, count) {
  const gate = new SharedArrayBuffer(4);
  /** @type {Promise<void>[]} */
  const ready = [];
  /** @type {Promise<bigint[]>[]} */
  const drawn = [];
  for (let i = 0; i < threads; i++) {
    const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
      workerData: { shared, gate, count },
    });
    workers.push(worker);
    /** @type {(value: void) => void} */
    let onReady = () => {};
    ready.push(new Promise((resolve) => (onReady = resolve)));
    drawn.push(
      new Promise((resolve, reject) => {
        worker.on('message', (message) => {
          if (message === 'ready') onReady();
          else resolve(Array.from(/** @type {BigUint64Array} */ (message)));
        });
        worker.once('error', reject);
        worker.once('exit', (code) =>
          reject(new Error(`worker thread ${i} exited (code ${code}) before posting its IDs`)),
        );
      }),
    );
  }
  // A thread that fails while starting rejects `drawn` before it is ever ready.
  await Promise.race([Promise.all(ready), Promise.all(drawn)]);
  const started = performance.now();
  Atomics.store(new Int32Array(gate), 0, 1);
  Atomics.notify(new Int32Array(gate), 0);
  const perThread = await Promise.all(drawn);
  return { perThread, ms: performance.now() - started };
}

/**
 * @param {{ threads?: number, count?: number, claimDir?: string, env?: Record<string, string | undefined>, interfaces?: import('@ids/machine-ip').InterfaceSource }} [options]
 *   `threads` (default 4, 1..64) worker threads each draw `count` IDs (default 5000, 1..1,000,000).
 *   `claimDir` is where the host claim is taken (default: IDS_CLAIM_DIR from `env`, else the
 *   user's state directory); `env` is where IDS_MACHINE_ID and IDS_CLAIM_DIR are read;
 *   `interfaces` replaces the host's interface list (tests use these).
 * @throws InvalidArgumentError for a bad `threads` or `count`; AutoMachineIdError when no
 *   machine ID can be had; an Error listing the problems when the check fails.
 */
export async function main({ threads = 4, count = 5000, claimDir, env = process.env, interfaces } = {}) {
  checkCount('threads', threads, MAX_THREADS);
  checkCount('count', count, MAX_COUNT);
  const layout = sonyflakeLayout();
  // The chain is a provider: run here once, for the layout's width, so that this thread holds
  // the ID before any worker starts. `onChosen` receives how it was chosen.
  /** @type {import('@ids/machine-file').AutoMachineId} */
  let auto = /** @type {never} */ (undefined);
  await autoMachineId({
    env,
    interfaces,
    claim: claimDir === undefined ? undefined : { dir: claimDir },
    onChosen: (chosen) => {
      auto = chosen;
    },
  })({ bits: layout.machineBits });
  console.log(`machine ID ${auto.id}, from the ${auto.step} step:`);
  for (const line of auto.explain().split('\n')) console.log(`  ${line}`);

  /** @type {Worker[]} */
  const workers = [];
  /** @type {Sonyflake | undefined} */
  let holder;
  try {
    // Given a claim, the shared state starts after the time its previous holder recorded.
    const shared = createSharedState(layout, auto.machineId);
    // This thread holds the claim: its generator renews the claim's record and, on close,
    // fences the threads' generators before recording the last time reached.
    holder = new Sonyflake({ machineId: auto.machineId, state: sharedStateCell(shared) });
    const { perThread, ms } = await draw(workers, shared, threads, count);

    const all = perThread.flat();
    const problems = check(perThread, auto.id);
    const together = overlapped(perThread);
    // The share of the slots used, from the first ID's tick to the last's: a rate against the
    // ceiling that does not depend on when the timer started within the first tick.
    let [first, last] = [all[0] ?? 0n, all[0] ?? 0n];
    for (const id of all) [first, last] = [id < first ? id : first, id > last ? id : last];
    const ticks = decompose(last).time - decompose(first).time + 1;
    const filled = all.length / (ticks * (layout.maxSequence + 1));
    console.log('');
    console.log(
      `${threads} worker threads drew ${number.format(count)} IDs each from one Sonyflake state under machine ID ${auto.id}:`,
    );
    console.log(
      `  ${number.format(all.length)} IDs in ${(ms / 1000).toFixed(2)} s, over ${number.format(ticks)} ticks of ${layout.timeUnitMs} ms: ${(filled * 100).toFixed(1)}% of their ${layout.maxSequence + 1} slots each (the ceiling, ${number.format(layoutLimits(layout).idsPerSecond)} IDs/s, is 100%)`,
    );
    console.log(
      `  duplicates: ${all.length - new Set(all).size}; each thread's IDs increasing: ${problems.some((p) => p.startsWith('thread ')) ? 'NO' : 'yes'}; the threads drew at the same time: ${together ? 'yes' : 'no'}`,
    );
    if (problems.length > 0) {
      throw new Error(`the check failed (${problems.length} problems):\n${problems.slice(0, 10).join('\n')}`);
    }
    return { auto, perThread, ms, overlapped: together };
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
    await holder?.close();
    if (!(auto.machineId instanceof HostClaim)) {
      console.log(`machine ID ${auto.id} was given, not claimed: nothing to release`);
    } else {
      if (!holder) await auto.machineId.release();
      const record = JSON.parse(readFileSync(auto.machineId.path, 'utf8'));
      console.log(`claim ${auto.machineId.path}: ${record.state}`);
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { values } = parseArgs({
      options: { threads: { type: 'string' }, count: { type: 'string' } },
    });
    /** @param {string | undefined} text */
    const int = (text) => (text === undefined ? undefined : /^\d{1,9}$/.test(text) ? Number(text) : text);
    await main({
      threads: /** @type {number | undefined} */ (int(values.threads)),
      count: /** @type {number | undefined} */ (int(values.count)),
    });
  } catch (error) {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
    process.exitCode = 1;
  }
}
