#!/usr/bin/env node
// The stress check (CONTRIBUTING.md): runs packages' vitest suites again and again while busy
// loops take the CPU, until they pass several times in a row. A suite that passes only on an
// idle machine fails here, with the name of the test that assumed it.
//
//   npm run test:stress -- [--loops 4] [--passes 5] [--max-attempts 10] [package|dir ...]
//
// Exit status: 0 when the suites passed --passes times in a row, 1 when --max-attempts ran out
// first, 2 for bad arguments, 130 when interrupted. Not part of `npm test`: it takes minutes.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const vitestBin = join(root, 'node_modules', 'vitest', 'vitest.mjs');
/** The suites that wait on leases, servers and child processes: the ones a busy machine squeezes. */
const DEFAULT_PACKAGES = [
  'machine-lease',
  'machine-etcd',
  'machine-redis',
  'machine-zookeeper',
  'lock',
  'segment',
  'server',
];
const USAGE =
  'usage: npm run test:stress -- [--loops N] [--passes N] [--max-attempts N] [package|dir ...]\n' +
  `  --loops         CPU busy loops running beside the tests (default 4; 0 for none)\n` +
  `  --passes        passes in a row that end the run with success (default 5)\n` +
  `  --max-attempts  attempts after which the run gives up (default 2 x passes)\n` +
  `  package|dir     a name under packages/ or a folder with a vitest config (default: ${DEFAULT_PACKAGES.join(' ')})`;

class UsageError extends Error {}

function count(flag, text, min) {
  if (text === undefined || !/^\d+$/.test(text) || Number(text) < min || Number(text) > 1000) {
    throw new UsageError(
      `${flag}: expected an integer from ${min} to 1000, received ${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}

/** Reads the command line: `{ help: true }`, or what to run. Throws UsageError on bad input. */
export function parseArgs(argv) {
  const options = { loops: 4, passes: 5, maxAttempts: undefined, suites: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') ? arg.split(/=(.*)/s) : [arg];
    const value = () => (inline !== undefined ? inline : argv[++i]);
    if (flag === '--help' || flag === '-h') return { help: true };
    else if (flag === '--loops') options.loops = count(flag, value(), 0);
    else if (flag === '--passes') options.passes = count(flag, value(), 1);
    else if (flag === '--max-attempts') options.maxAttempts = count(flag, value(), 1);
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${JSON.stringify(arg)}`);
    else options.suites.push(suiteDir(arg));
  }
  if (options.suites.length === 0) options.suites = DEFAULT_PACKAGES.map(suiteDir);
  options.maxAttempts ??= 2 * options.passes;
  if (options.maxAttempts < options.passes) {
    throw new UsageError(
      `--max-attempts: expected at least --passes (${options.passes}), received ${options.maxAttempts}`,
    );
  }
  return options;
}

/** A package name (`machine-redis`, `@ids/machine-redis`) or a folder, as the folder to run vitest in. */
function suiteDir(name) {
  const short = name.replace(/^@ids\//, '');
  const candidates = [join(root, 'packages', short), resolve(name)];
  const dir = candidates.find((d) => existsSync(join(d, 'package.json')) || hasVitestConfig(d));
  if (!dir) throw new UsageError(`${JSON.stringify(name)}: no such package under packages/, nor a folder`);
  return dir;
}

function hasVitestConfig(dir) {
  return ['ts', 'mts', 'js', 'mjs'].some((ext) => existsSync(join(dir, `vitest.config.${ext}`)));
}

/**
 * Starts `n` node processes that spin on the CPU. Each one also exits by itself when its parent
 * is gone (its ppid changes), so that even a SIGKILLed run leaves nothing spinning.
 */
function startLoops(n) {
  const code = `const p = process.ppid; for (let i = 0; ; i++) if (i % 1e8 === 0 && process.ppid !== p) process.exit(0);`;
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', code], { stdio: 'ignore' }));
}

function load() {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
}

/** Runs vitest once in `dir`; resolves with its exit code, the failures it reported, and its log. */
function runSuite(dir, scratch, attempt, onChild) {
  const name = relative(root, dir) || basename(dir);
  const tag = `${attempt}-${name.replace(/[^\w.-]+/g, '_')}`;
  const json = join(scratch, `${tag}.json`);
  const log = join(scratch, `${tag}.log`);
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [vitestBin, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${json}`],
      {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      },
    );
    onChild(child);
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (code, signal) => {
      onChild(undefined);
      writeFileSync(log, output);
      done({ name, code: code ?? signal, failures: failuresIn(json, output), log });
    });
  });
}

/** "file > describe > test: first line of the error" for each failure in vitest's JSON report. */
function failuresIn(jsonFile, output) {
  let report;
  try {
    report = JSON.parse(readFileSync(jsonFile, 'utf8'));
  } catch {
    // No report: vitest itself failed (a config error, a crash); its last lines say why.
    return [`no report from vitest: ${output.trim().split('\n').slice(-3).join(' | ')}`];
  }
  const failures = [];
  for (const file of report.testResults ?? []) {
    const where = relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failed) failures.push(`${where} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
    if (failed.length === 0 && file.status === 'failed')
      failures.push(`${where}: ${firstLine(file.message)}`);
  }
  return failures;
}

function firstLine(text) {
  return String(text ?? '')
    .split('\n')[0]
    .slice(0, 300);
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

async function main(argv) {
  let options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const { loops: n, passes, maxAttempts, suites } = options;
  const scratch = mkdtempSync(join(tmpdir(), 'ids-stress-'));
  const loops = startLoops(n);
  let current;
  let interrupted = false;
  const stopAll = () => {
    for (const loop of loops) loop.kill('SIGKILL');
    current?.kill('SIGTERM');
  };
  const onSignal = (signal) => {
    interrupted = true;
    console.log(`\n${signal}: stopping the busy loops and the running suite`);
    stopAll();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', stopAll);
  console.log(
    `stress: ${n} busy loops (pids ${loops.map((l) => l.pid).join(' ') || 'none'}); load ${load()}`,
  );
  console.log(
    `suites: ${suites.map((d) => relative(root, d) || d).join(', ')}; ${passes} passes in a row, at most ${maxAttempts} attempts`,
  );
  let streak = 0;
  let attempt = 0;
  const started = performance.now();
  try {
    while (streak < passes && attempt < maxAttempts && !interrupted) {
      attempt++;
      const t0 = performance.now();
      const results = [];
      for (const dir of suites) {
        if (interrupted) break;
        const t = performance.now();
        const result = await runSuite(dir, scratch, attempt, (child) => {
          current = child;
        });
        results.push({ ...result, ms: performance.now() - t });
      }
      if (interrupted) break;
      const failed = results.filter((r) => r.code !== 0);
      streak = failed.length === 0 ? streak + 1 : 0;
      const each = results.map((r) => `${r.name} ${seconds(r.ms)}`).join(', ');
      console.log(
        `attempt ${attempt}: ${failed.length === 0 ? 'PASS' : 'FAIL'} in ${seconds(performance.now() - t0)} (${each}); load ${load()}; ${streak} in a row`,
      );
      for (const r of failed) {
        console.log(`  ${r.name} exited with ${r.code}; log ${r.log}`);
        for (const f of r.failures) console.log(`    ${f}`);
      }
    }
  } finally {
    stopAll();
    process.off('exit', stopAll);
  }
  const verdict = interrupted
    ? 'interrupted'
    : streak >= passes
      ? `passed ${passes} times in a row`
      : `did not pass ${passes} times in a row within ${maxAttempts} attempts`;
  console.log(
    `stress: ${verdict} after ${attempt} attempts, ${seconds(performance.now() - started)}; load ${load()}`,
  );
  if (streak >= passes) rmSync(scratch, { recursive: true, force: true });
  else console.log(`logs of every attempt: ${scratch}`);
  return interrupted ? 130 : streak >= passes ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
