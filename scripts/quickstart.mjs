#!/usr/bin/env node
// The README's two commands. `npm start` and `npm test` must work on a fresh machine that has
// only Node >= 20 and npm, so this script brings everything else itself: pnpm (through corepack,
// or npx when corepack is absent), the workspace's dependencies, the build, and for the tests
// whatever system programs they need (see scripts/ensure-services.mjs).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pnpmVersion = pkg.packageManager.split('+')[0].split('@')[1];

const env = {
  ...process.env,
  // corepack would otherwise ask before downloading pnpm the first time.
  COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  // pnpm aborts without a terminal when it wants to purge node_modules; CI mode skips the prompt.
  CI: process.env.CI ?? 'true',
  // turbo looks up a telemetry host on its first run; this machine has no route to it.
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
};

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(command, args, what) {
  const status = run(command, args);
  if (status !== 0) {
    console.error(`\n${what} failed (exit code ${status}): ${command} ${args.join(' ')}`);
    process.exit(status);
  }
}

/** The pnpm pinned in package.json, through corepack when it works, else through npx. */
function pnpmCommand() {
  const probe = spawnSync('corepack', ['pnpm', '--version'], { cwd: root, env, encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === pnpmVersion) return ['corepack', ['pnpm']];
  return ['npx', ['-y', `pnpm@${pnpmVersion}`]];
}

const [pnpmBin, pnpmPre] = pnpmCommand();
const pnpm = (args, what) => must(pnpmBin, [...pnpmPre, ...args], what);

// turbo runs package scripts through a `pnpm` it finds on PATH; corepack (or npx) provides one
// without installing anything globally, so put a two-line shim for it first on PATH.
const shimDir = join(root, 'node_modules', '.ids-shims');
mkdirSync(shimDir, { recursive: true });
const shim = join(shimDir, 'pnpm');
const quoted = [pnpmBin, ...pnpmPre].map((part) => `'${part}'`).join(' ');
writeFileSync(shim, `#!/bin/sh\nexec ${quoted} "$@"\n`);
chmodSync(shim, 0o755);
env.PATH = `${shimDir}:${env.PATH ?? ''}`;

function install() {
  pnpm(['install', '--frozen-lockfile', '--reporter=append-only'], 'Installing dependencies');
}

/**
 * The checkout's changed and untracked files, each with its content hash, or undefined outside a
 * git checkout (an unpacked archive has nothing to compare). Taken before and after the tests, so
 * a developer's own edits do not count: only what the suite itself wrote does.
 */
function treeState() {
  const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const inside = git(['rev-parse', '--is-inside-work-tree']);
  if (inside.error || inside.status !== 0 || inside.stdout.trim() !== 'true') return undefined;
  const status = git(['status', '--porcelain=v1', '-z', '--untracked-files=all']).stdout;
  const state = new Map();
  for (const entry of status.split('\0').filter(Boolean)) {
    const file = entry.slice(3);
    const hash = git(['hash-object', '--', file]);
    state.set(file, `${entry.slice(0, 2)} ${hash.status === 0 ? hash.stdout.trim() : 'gone'}`);
  }
  return state;
}

const turbo = (tasks, extra = []) =>
  pnpm(['exec', 'turbo', 'run', ...tasks, ...extra], `turbo ${tasks.join(' ')}`);

const job = process.argv[2] ?? 'start';
switch (job) {
  case 'start': {
    install();
    turbo(['build'], ['--output-logs=errors-only']);
    // The main job: choose a machine ID (saying how), then generate and decompose a few IDs.
    must(process.execPath, [join(root, 'examples/basic/index.mjs')], 'The main job');
    break;
  }
  case 'test': {
    install();
    must(
      process.execPath,
      [join(root, 'scripts/ensure-services.mjs')],
      'Making etcd, Redis, PostgreSQL and Chromium available',
    );
    turbo(['build'], ['--output-logs=errors-only']);
    turbo(['typecheck'], ['--output-logs=errors-only']);
    pnpm(['exec', 'biome', 'check', '.'], 'Lint and format check (biome)');
    const before = treeState();
    turbo(['test'], ['--concurrency=1']);
    // Tests must write only to temporary folders: a screenshot or generated doc rewritten in
    // place is a change nobody asked for (issue 37 found comparison.png modified after a run).
    const after = treeState();
    if (before && after) {
      const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
        (file) => before.get(file) !== after.get(file),
      );
      if (changed.length > 0) {
        console.error(
          `\nThe tests changed files of the checkout (git status --porcelain):\n${changed
            .map((file) => `  ${after.get(file)?.slice(0, 2) ?? '(restored)'} ${file}`)
            .join('\n')}\nA test must write only to a temporary folder.`,
        );
        process.exit(1);
      }
    }
    break;
  }
  case 'build': {
    // For scripts/pack.mjs: the workspace installed and built, nothing run.
    install();
    turbo(['build'], ['--output-logs=errors-only']);
    break;
  }
  case 'bench': {
    install();
    turbo(['build'], ['--output-logs=errors-only']);
    pnpm(['--filter', '@ids/bench', 'run', 'bench', ...process.argv.slice(3)], 'The benchmark');
    break;
  }
  default:
    console.error(
      `usage: node scripts/quickstart.mjs start|test|build|bench (received ${JSON.stringify(job)})`,
    );
    process.exit(2);
}
