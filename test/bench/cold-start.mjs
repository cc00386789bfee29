// Cold start: the cost of import + the first ID in a fresh `node` process (machine ID given),
// over a bare `node -e` start, in CPU time (the child's own user + system time when it has the ID), for ESM (`import`) and CJS (`require`), ours and the peers'.
// Runs are interleaved (bare, then each subject, round after round) so that a slow stretch of
// this shared machine hits every subject alike; each figure is a median.
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable } from './lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const EPOCH = 1288834974657;

/** How each subject is loaded (ESM, CJS) and makes its first ID. */
const SUBJECTS = {
  '@ids/sonyflake': {
    esm: "import { Sonyflake } from '@ids/sonyflake';",
    cjs: "const { Sonyflake } = require('@ids/sonyflake');",
    call: 'new Sonyflake({ machineId: 1 }).nextIdSync()',
  },
  '@ids/snowflake': {
    esm: "import { Snowflake } from '@ids/snowflake';",
    cjs: "const { Snowflake } = require('@ids/snowflake');",
    call: 'new Snowflake({ machineId: 1 }).nextIdSync()',
  },
  '@sapphire/snowflake': {
    esm: "import { Snowflake } from '@sapphire/snowflake';",
    cjs: "const { Snowflake } = require('@sapphire/snowflake');",
    call: `new Snowflake(${EPOCH}n).generate()`,
  },
  'nodejs-snowflake': {
    esm: "import nodejsSnowflake from 'nodejs-snowflake';",
    cjs: "const nodejsSnowflake = require('nodejs-snowflake');",
    call: `new nodejsSnowflake.Snowflake({ custom_epoch: ${EPOCH}, instance_id: 1 }).getUniqueID()`,
  },
  snowflakify: {
    esm: "import Snowflakify from 'snowflakify';",
    cjs: "const Snowflakify = require('snowflakify').default;",
    call: `new Snowflakify({ epoch: ${EPOCH} }).nextId()`,
  },
};

// What every child prints last: its CPU time (user + system) and wall time since it started. CPU
// time is the figure compared, since wall time on this shared machine mostly measures waiting.
const REPORT =
  'const u = process.cpuUsage(); process.stdout.write(JSON.stringify({ cpu: (u.user + u.system) / 1000, wall: performance.now() }));';

function script(mode, subject) {
  return `${subject[mode]} const id = String(${subject.call}); if (!/^[0-9]+$/.test(id)) throw new Error('no ID: ' + id); ${REPORT}`;
}

function timeRun(args) {
  const run = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`cold start of ${args.join(' ')} failed: ${run.stderr}`);
  return JSON.parse(run.stdout).cpu;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** @returns {Array<[string, 'esm' | 'cjs', string[]]>} each case's subject, mode and node arguments */
function allCases() {
  /** @type {Array<[string, 'esm' | 'cjs', string[]]>} */
  const cases = [
    ['bare', 'esm', ['--input-type=module', '-e', REPORT]],
    ['bare', 'cjs', ['-e', REPORT]],
  ];
  for (const [name, subject] of Object.entries(SUBJECTS)) {
    cases.push([name, 'esm', ['--input-type=module', '-e', script('esm', subject)]]);
    cases.push([name, 'cjs', ['-e', script('cjs', subject)]]);
  }
  return cases;
}

// CPU time on a shared machine moves with the load of its neighbours (under load the medians of
// 31 runs still disagree by several ms); the instructions a process executes do not. With
// IDS_BENCH_COLD_COUNT=instructions each case runs once under valgrind's callgrind with V8's
// random seed fixed (a random hash seed varies startup by a few million instructions; fixing
// --hash-seed instead would also void Node's code cache for its own modules), which repeats to
// within a few thousand instructions. Slow (about 15 s a case) and needs valgrind on PATH.
function countInstructions(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--callgrind-out-file=/dev/null',
        '--smc-check=all-non-file',
        process.execPath,
        '--random-seed=7',
        ...args,
      ],
      { cwd: here, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', (error) =>
      reject(
        new Error(
          `valgrind could not be started (install it, e.g. apt-get install valgrind): ${error.message}`,
        ),
      ),
    );
    child.on('close', (code) => {
      const collected = /Collected : (\d+)/.exec(stderr);
      if (code !== 0 || !collected)
        reject(new Error(`callgrind of ${args.join(' ')} failed (${code}): ${stderr.slice(-500)}`));
      else resolve(Number(collected[1]));
    });
  });
}

async function benchInstructions() {
  const cases = allCases();
  const counts = new Map();
  let next = 0;
  const worker = async () => {
    for (let item = cases[next++]; item !== undefined; item = cases[next++]) {
      const [name, mode, args] = item;
      counts.set(`${name}/${mode}`, await countInstructions(args));
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), cases.length) }, worker));
  const over = (name, mode) => (counts.get(`${name}/${mode}`) - counts.get(`bare/${mode}`)) / 1e6;
  const rows = Object.keys(SUBJECTS).map((name) => [
    name,
    `${over(name, 'esm').toFixed(1)} M`,
    `${(over(name, 'esm') / over('@sapphire/snowflake', 'esm')).toFixed(2)}x`,
    `${over(name, 'cjs').toFixed(1)} M`,
    `${(over(name, 'cjs') / over('@sapphire/snowflake', 'cjs')).toFixed(2)}x`,
  ]);
  return {
    title: 'Cold start: instructions for import + first ID in a fresh process, over a bare node start',
    table: `${formatTable(
      [
        'package',
        'ESM, instructions over bare',
        'vs @sapphire',
        'CJS, instructions over bare',
        'vs @sapphire',
      ],
      rows,
    )}\n\nOne callgrind run per case (node --random-seed=7); bare node: ${(counts.get('bare/esm') / 1e6).toFixed(1)} M instructions (ESM), ${(counts.get('bare/cjs') / 1e6).toFixed(1)} M (CJS). Goal: @ids/sonyflake within 1.5x of @sapphire/snowflake.`,
  };
}

export async function benchColdStart({ rounds = Number(process.env.IDS_BENCH_COLD_ROUNDS ?? 21) } = {}) {
  if (process.env.IDS_BENCH_COLD_COUNT === 'instructions') return benchInstructions();
  const cases = allCases();
  /** @type {Map<string, number[]>} */
  const times = new Map(cases.map(([name, mode]) => [`${name}/${mode}`, []]));
  const of = (/** @type {string} */ key) => /** @type {number[]} */ (times.get(key));
  for (const [, , args] of cases) timeRun(args); // warm the file cache
  for (let round = 0; round < rounds; round++) {
    for (const [name, mode, args] of cases) of(`${name}/${mode}`).push(timeRun(args));
  }
  const over = (name, mode) => median(of(`${name}/${mode}`)) - median(of(`bare/${mode}`));
  const sapphire = { esm: over('@sapphire/snowflake', 'esm'), cjs: over('@sapphire/snowflake', 'cjs') };
  const rows = Object.keys(SUBJECTS).map((name) => {
    const esm = over(name, 'esm');
    const cjs = over(name, 'cjs');
    return [
      name,
      `${esm.toFixed(1)} ms`,
      `${(esm / sapphire.esm).toFixed(2)}x`,
      `${cjs.toFixed(1)} ms`,
      `${(cjs / sapphire.cjs).toFixed(2)}x`,
    ];
  });
  const bare = `bare node: ${median(of('bare/esm')).toFixed(1)} ms CPU (ESM), ${median(of('bare/cjs')).toFixed(1)} ms CPU (CJS)`;
  return {
    title: 'Cold start: import + first ID in a fresh process, over a bare node start',
    table: `${formatTable(
      ['package', 'ESM, CPU ms over bare', 'vs @sapphire', 'CJS, CPU ms over bare', 'vs @sapphire'],
      rows,
    )}\n\nMedians of ${rounds} interleaved runs each; ${bare}. Goal: @ids/sonyflake within 1.5x of @sapphire/snowflake.`,
  };
}
