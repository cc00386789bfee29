// CLI cost per run: the CPU time (user + system) of one `ids generate` process (no flags: the
// default path, the auto machine-ID chain, as a user first runs it) and of `ids --version`,
// against the uuid package's own CLI making one UUID, and a bare `node -e ''` as the floor.
// Issue 37's targets, both checked in the same run: generate within 1.5x of uuid, --version
// within 1.1x the floor + 10 ms. Each round runs
// every case BATCH times in a row inside one bash, whose `times` builtin reports the CPU its
// children used (getrusage of the reaped processes); rounds are interleaved so that a slow
// stretch of this shared machine hits every case alike, and each figure is a median over rounds.
// Children run under this process's node (run the bench under Node 24 to measure Node 24).
// IDS_BENCH_CLI_ROUNDS (default 9) and IDS_BENCH_CLI_BATCH (default 10) set the size.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable } from './lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// IDS_BENCH_CLI_BIN measures another build of the bin (an older one, for a before/after figure).
const idsBin = process.env.IDS_BENCH_CLI_BIN ?? join(here, '..', '..', 'packages', 'cli', 'bin', 'ids.js');
const uuidRoot = join(here, 'node_modules', 'uuid');
const uuidBin = join(uuidRoot, JSON.parse(readFileSync(join(uuidRoot, 'package.json'), 'utf8')).bin.uuid);

/** Each case: its label and the arguments of `node`. */
const CASES = [
  ['node -e "" (floor)', ['-e', '']],
  ['uuid (its bin, one v4)', [uuidBin]],
  ['ids --version', [idsBin, '--version']],
  ['ids generate', [idsBin, 'generate']],
  ['ids generate --machine-id 1', [idsBin, 'generate', '--machine-id', '1']],
];

const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

/** CPU ms of `batch` runs of node with `args`, as bash's `times` reports for its children. */
function batchCpu(args, batch, env) {
  const command = [process.execPath, ...args].map(quote).join(' ');
  const script = `for i in $(seq ${batch}); do ${command} > /dev/null || exit 1; done; times`;
  const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`${command} failed: ${run.stderr}`);
  // `times` prints the shell's own user and system time, then its children's: "0m0.412s 0m0.080s".
  const children = run.stdout.trim().split('\n').at(-1) ?? '';
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (seconds.length !== 2) throw new Error(`no times from bash: ${JSON.stringify(run.stdout)}`);
  const [user = 0, system = 0] = seconds;
  return ((user + system) * 1000) / batch;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export async function benchCli({
  rounds = Number(process.env.IDS_BENCH_CLI_ROUNDS ?? 9),
  batch = Number(process.env.IDS_BENCH_CLI_BATCH ?? 10),
} = {}) {
  // Host claims of `ids generate` (no --machine-id: the auto chain, as a user runs it) go to a
  // folder of this run, not the user's own.
  /** @type {NodeJS.ProcessEnv} */
  const env = { ...process.env, IDS_CLAIM_DIR: mkdtempSync(join(tmpdir(), 'ids-bench-cli-')) };
  delete env.NODE_COMPILE_CACHE; // the ids bin picks its cache itself
  /** @type {number[][]} */
  const times = CASES.map(() => []);
  for (const [, args] of CASES) batchCpu(args, 1, env); // warm the file and compile caches
  for (let round = 0; round < rounds; round++) {
    for (const [i, [, args]] of CASES.entries()) times[i]?.push(batchCpu(args, batch, env));
  }
  const [floor = 0, uuid = 0, version = 0, generate = 0] = times.map(median);
  const rows = CASES.map(([label], i) => [
    label,
    `${median(times[i]).toFixed(1)} ms`,
    `${(median(times[i]) / uuid).toFixed(2)}x`,
  ]);
  const versionBound = floor * 1.1 + 10;
  const verdict = (ok) => (ok ? 'met' : 'NOT met');
  const targets = formatTable(
    ['target', 'measured', 'bound', ''],
    [
      [
        'ids generate <= 1.5x uuid',
        `${(generate / uuid).toFixed(2)}x`,
        '1.50x',
        verdict(generate <= 1.5 * uuid),
      ],
      [
        'ids --version <= 1.1x node -e "" + 10 ms',
        `${version.toFixed(1)} ms`,
        `${versionBound.toFixed(1)} ms`,
        verdict(version <= versionBound),
      ],
    ],
  );
  return {
    title: 'CLI: CPU time of one run (user + system), against the uuid CLI',
    table: `${formatTable(['command', 'CPU per run', 'vs uuid'], rows)}\n\n${targets}\n\nMedians of ${rounds} interleaved rounds of ${batch} runs each, node ${process.version}.`,
  };
}
