// A fleet on one machine: several processes claim machine IDs from one etcd, issue Sonyflake
// IDs, and release their IDs; then a checker confirms that every ID is unique.
//
//   node index.mjs [--workers 8] [--bits 2] [--ids 5000]
//
// With a 2-bit machine field there are 4 machine IDs for 8 processes: the second four wait
// for IDs to be released and take them over. Their clocks are set up to 750 ms apart, as hosts'
// clocks can be: a successor whose clock is behind must still start after the time its
// predecessor recorded on the ID, or it would issue IDs that sort before the old ones (and, in
// the same tick, repeat them). Uses the etcd in ETCD_ENDPOINTS, or starts one for the run with
// the repository's test launcher, @ids/test-services (Debian's etcd-server;
// `node scripts/ensure-services.mjs` installs it).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startEtcd } from '@ids/test-services';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * @param {string[]} endpoints @param {string} prefix @param {number} bits @param {number} count
 * @param {number} skewMs how far this worker's clock is behind
 */
function runWorker(endpoints, prefix, bits, count, skewMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(here, 'worker.mjs'), endpoints.join(','), prefix, String(bits), String(count), String(skewMs)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    // 'close', not 'exit': the report may still be in the pipe when the worker has exited.
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`worker exited with code ${code}`));
      else resolve(JSON.parse(out));
    });
  });
}

/**
 * Every ID unique, each carrying its process's machine ID, and each process that took over a
 * machine ID (in the order they claimed it) issuing only IDs above its predecessor's.
 * Returns the problems found (none: []).
 * @param {{ pid: number, machineId: number, claimedAt: number, ids: string[] }[]} reports
 * @param {number} bits
 */
export function check(reports, bits) {
  // Sonyflake puts the machine ID in the lowest bits; reading it needs no generator (a second
  // live generator of a process's layout and machine ID would be refused, and rightly).
  const machineMask = (1n << BigInt(bits)) - 1n;
  const problems = [];
  /** @type {Map<string, number>} */
  const seen = new Map();
  for (const report of reports) {
    for (const id of report.ids) {
      const other = seen.get(id);
      if (other !== undefined) problems.push(`ID ${id} was issued by pid ${other} and pid ${report.pid}`);
      seen.set(id, report.pid);
      const machine = Number(BigInt(id) & machineMask);
      if (machine !== report.machineId) {
        problems.push(`ID ${id} from pid ${report.pid} carries machine ${machine}, not ${report.machineId}`);
      }
    }
  }
  /** @type {Map<number, typeof reports>} */
  const byMachine = new Map();
  for (const report of reports) {
    const list = byMachine.get(report.machineId) ?? [];
    list.push(report);
    byMachine.set(report.machineId, list);
  }
  for (const [machine, holders] of byMachine) {
    holders.sort((a, b) => a.claimedAt - b.claimedAt);
    holders.forEach((holder, i) => {
      const previous = holders[i - 1];
      if (!previous || holder.ids.length === 0 || previous.ids.length === 0) return;
      const before = BigInt(previous.ids[previous.ids.length - 1] ?? 0);
      const first = BigInt(holder.ids[0] ?? 0);
      if (first <= before) {
        problems.push(
          `machine ${machine}: pid ${holder.pid} took over from pid ${previous.pid} but issued ID ${first}, not above its last, ${before}`,
        );
      }
    });
  }
  return { problems, total: seen.size, byMachine };
}

/** @param {string} name @param {string | undefined} raw @param {number} min @param {number} max */
function integer(name, raw, min, max) {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}: expected an integer from ${min} to ${max}, received ${JSON.stringify(raw)}`);
  }
  return value;
}

async function main() {
  const { values } = parseArgs({
    options: {
      workers: { type: 'string', default: '8' },
      bits: { type: 'string', default: '2' },
      ids: { type: 'string', default: '5000' },
    },
  });
  const workers = integer('--workers', values.workers, 1, 64);
  const bits = integer('--bits', values.bits, 0, 16);
  const count = integer('--ids', values.ids, 1, 1_000_000);
  const external = process.env.ETCD_ENDPOINTS;
  const etcd = external ? { endpoints: external.split(','), stop: async () => undefined } : await startEtcd();
  console.log(
    external
      ? `etcd: ${external} (from ETCD_ENDPOINTS)`
      : `etcd: started for this run at ${etcd.endpoints[0]} (set ETCD_ENDPOINTS to use yours)`,
  );
  try {
    const prefix = `/ids-example/fleet-${process.pid}-${Date.now()}`;
    console.log(
      `${workers} processes, a ${bits}-bit machine field (${2 ** bits} machine IDs), clocks up to 750 ms apart: each claims an ID, issues ${count.toLocaleString('en-US')} IDs and releases it`,
    );
    const reports = await Promise.all(
      Array.from({ length: workers }, (_, i) =>
        runWorker(etcd.endpoints, prefix, bits, count, -(i % 4) * 250),
      ),
    );
    const { problems, total, byMachine } = check(reports, bits);
    for (const [machine, holders] of [...byMachine].sort((a, b) => a[0] - b[0])) {
      console.log(
        `machine ${machine}: held in turn by ${holders.map((h) => `pid ${h.pid}`).join(', then ')}`,
      );
    }
    if (problems.length > 0) {
      console.error(`FAILED: ${problems.length} problems, first: ${problems.slice(0, 5).join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log(
        `checked ${total.toLocaleString('en-US')} IDs from ${workers} processes: all unique, each carries its process's machine ID, and every later holder of a machine ID issued only IDs above the earlier one's`,
      );
    }
  } finally {
    await etcd.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
