// node:cluster on one host: the primary forks N workers, and each worker takes a machine ID of
// its own from a host claim in one shared directory, issues Sonyflake IDs and sends them to the
// primary. The primary checks that no two workers held the same machine ID and that every ID is
// unique across workers; then it has the workers close their generators (which releases their
// claims) and exit, and checks that the claims were released.
//
//   node index.mjs [--workers 4] [--count 10000]
//
// The claim directory is IDS_CLAIM_DIR, else the user's state directory (defaultClaimDir).
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultClaimDir } from '@ids/machine-file';
import { decompose, InvalidArgumentError } from '@ids/sonyflake';

const MAX_WORKERS = 64;
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
 * @typedef {{ index: number, pid: number, machineId: number, trail: string, ids: bigint[] }} Report
 */

/**
 * What the primary checks once every worker has reported, while all of them still hold their
 * claims: distinct machine IDs, every ID carrying its worker's machine ID, each worker's IDs
 * increasing, and no ID issued twice across workers. Returns the problems found (none: []).
 * @param {readonly Report[]} reports
 */
export function check(reports) {
  /** @type {string[]} */
  const problems = [];
  /** @type {Map<number, number>} */
  const holders = new Map();
  /** @type {Map<bigint, number>} */
  const issuedBy = new Map();
  for (const { index, machineId, ids } of reports) {
    const other = holders.get(machineId);
    if (other !== undefined) problems.push(`workers ${other} and ${index} both held machine ID ${machineId}`);
    else holders.set(machineId, index);
    ids.forEach((id, i) => {
      const earlier = issuedBy.get(id);
      if (earlier !== undefined)
        problems.push(`ID ${id} was issued by worker ${earlier} and worker ${index}`);
      else issuedBy.set(id, index);
      const before = ids[i - 1];
      if (before !== undefined && id <= before) {
        problems.push(`worker ${index}: ID ${id} (#${i}) is not above the ID before it, ${before}`);
      }
      const { machine } = decompose(id);
      if (machine !== machineId) {
        problems.push(
          `worker ${index}: ID ${id} carries machine ${machine}, not its machine ID ${machineId}`,
        );
      }
    });
  }
  return problems;
}

/**
 * Forks one worker and resolves with its report once it has sent its IDs.
 * @param {number} index @param {string} dir @param {number} count
 * @returns {{ worker: import('node:cluster').Worker, report: Promise<Report> }}
 */
function fork(index, dir, count) {
  const worker = cluster.fork({ IDS_CLAIM_DIR: dir, IDS_COUNT: String(count) });
  const report = new Promise((resolve, reject) => {
    /** @type {{ machineId: number, trail: string } | undefined} */
    let claimed;
    worker.on('message', (message) => {
      if (message.type === 'claimed') claimed = message;
      else if (message.type === 'failed') reject(new Error(`worker ${index}: ${message.error}`));
      else if (message.type === 'ids' && claimed) {
        const pid = /** @type {number} */ (worker.process.pid);
        resolve({ index, pid, ...claimed, ids: Array.from(/** @type {BigUint64Array} */ (message.ids)) });
      }
    });
    worker.once('exit', (code, signal) =>
      reject(new Error(`worker ${index} exited (${signal ?? `code ${code}`}) before sending its IDs`)),
    );
  });
  return /** @type {{ worker: import('node:cluster').Worker, report: Promise<Report> }} */ ({
    worker,
    report,
  });
}

/** @param {import('node:cluster').Worker} worker @returns {Promise<{ code: number | null, signal: string | null }>} */
function exited(worker) {
  if (worker.process.exitCode !== null || worker.process.signalCode !== null) {
    return Promise.resolve({ code: worker.process.exitCode, signal: worker.process.signalCode });
  }
  return new Promise((resolve) => worker.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * @param {{ workers?: number, count?: number, claimDir?: string, env?: Record<string, string | undefined> }} [options]
 *   `workers` (default 4, 1..64) each issue `count` IDs (default 10,000, 1..1,000,000);
 *   `claimDir` is the shared claim directory (default: `defaultClaimDir(env)`, i.e.
 *   IDS_CLAIM_DIR, else the user's state directory); `env` is where IDS_CLAIM_DIR is read.
 * @throws InvalidArgumentError for a bad `workers` or `count`; ClaimDirError when no claim
 *   directory is known; an Error naming the worker when one fails, or listing the problems
 *   when the check fails.
 */
export async function main({ workers = 4, count = 10_000, claimDir, env = process.env } = {}) {
  checkCount('workers', workers, MAX_WORKERS);
  checkCount('count', count, MAX_COUNT);
  const dir = claimDir ?? defaultClaimDir(env);
  // 'advanced' serialization lets the workers send their IDs as a BigUint64Array.
  cluster.setupPrimary({
    exec: fileURLToPath(new URL('./worker.mjs', import.meta.url)),
    serialization: 'advanced',
  });
  console.log(`${workers} workers, each with a machine ID of its own from a host claim in ${dir}:`);
  if (env.IDS_MACHINE_ID !== undefined) {
    console.log('  (IDS_MACHINE_ID is not used: one explicit ID for every worker would repeat IDs)');
  }

  const forked = Array.from({ length: workers }, (_, i) => fork(i, dir, count));
  try {
    // Every worker still holds its claim here: the claims overlap in time, so distinct machine
    // IDs below mean the claims kept them apart, not that the workers took turns.
    const reports = await Promise.all(forked.map((f) => f.report));
    for (const r of reports)
      console.log(`  worker ${r.index} (pid ${r.pid}): machine ID ${r.machineId} - ${r.trail}`);
    const problems = check(reports);
    if (problems.length > 0) {
      throw new Error(`the check failed (${problems.length} problems):\n${problems.slice(0, 10).join('\n')}`);
    }
    const machineIds = reports.map((r) => r.machineId).sort((a, b) => a - b);
    const total = reports.reduce((sum, r) => sum + r.ids.length, 0);
    console.log('');
    console.log(
      `checked ${number.format(total)} IDs from ${workers} workers: all unique; machine IDs ${machineIds.join(', ')}, one per worker; each worker's IDs carry its own and increase`,
    );

    for (const { worker } of forked) worker.send('close');
    const exits = await Promise.all(forked.map(({ worker }) => exited(worker)));
    const failed = exits.findIndex((e) => e.code !== 0);
    if (failed !== -1)
      throw new Error(
        `worker ${failed} exited with ${exits[failed]?.signal ?? `code ${exits[failed]?.code}`} on close`,
      );
    // Each claim file names its last holder: released by that worker, not taken by anyone since.
    const claims = reports.map((r) => {
      const record = JSON.parse(readFileSync(join(dir, `${r.machineId}.claim`), 'utf8'));
      const released = record.state === 'released' && record.pid === r.pid;
      return {
        released,
        text: `${r.machineId}.claim ${released ? 'released' : `${record.state} by pid ${record.pid}`}`,
      };
    });
    console.log(`every worker closed its generator and exited; ${claims.map((c) => c.text).join(', ')}`);
    if (!claims.every((c) => c.released)) {
      throw new Error(`a claim was not released by its worker: ${claims.map((c) => c.text).join(', ')}`);
    }
    return { dir, reports };
  } finally {
    // On a failure, stop the workers that are left: no process outlives main(). A claim whose
    // holder was killed is taken over by the next claimer (its pid is gone).
    for (const { worker } of forked) if (!worker.isDead()) worker.process.kill();
    await Promise.all(forked.map(({ worker }) => exited(worker)));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { values } = parseArgs({ options: { workers: { type: 'string' }, count: { type: 'string' } } });
    /** @param {string | undefined} text */
    const int = (text) => (text === undefined ? undefined : /^\d{1,9}$/.test(text) ? Number(text) : text);
    await main({
      workers: /** @type {number | undefined} */ (int(values.workers)),
      count: /** @type {number | undefined} */ (int(values.count)),
    });
  } catch (error) {
    console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
    process.exitCode = 1;
  }
}
