#!/usr/bin/env node
// Runs benchmark suites on this tree and on an earlier commit in one run, so that a change is
// judged against its predecessor on the same machine at the same time, not against figures
// taken elsewhere:
//
//   node scripts/bench-compare.mjs <commit> [suite ...]
//
// The commit is checked out in a temporary git worktree, installed and built there; then each
// suite that both trees have runs on the earlier tree, then on this one, suite by suite, and
// both tables are printed one above the other. Run `npm run build` here first. Each tree runs
// its own benchmark code, as `npm run bench` did at that commit.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [ref, ...wanted] = process.argv.slice(2);
if (!ref) {
  console.error('usage: node scripts/bench-compare.mjs <commit> [suite ...]');
  process.exit(2);
}

const env = {
  ...process.env,
  COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  CI: 'true',
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  PATH: `${join(root, 'node_modules', '.ids-shims')}:${process.env.PATH ?? ''}`,
};

function must(command, args, cwd, what) {
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`${what} failed (exit ${result.status}) in ${cwd}`);
}

/** The suites a tree's test/bench/run.mjs knows, from its `suites` table. */
function suitesOf(tree) {
  const text = readFileSync(join(tree, 'test/bench/run.mjs'), 'utf8');
  const table = text.slice(text.indexOf('const suites'), text.indexOf('};', text.indexOf('const suites')));
  return [...table.matchAll(/^\s+'?([a-z-]+)'?:/gm)].map((m) => m[1]);
}

function bench(tree, suite) {
  const result = spawnSync(process.execPath, ['run.mjs', suite], {
    cwd: join(tree, 'test/bench'),
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (result.status !== 0)
    return `(failed, exit ${result.status}: ${result.stderr.trim().split('\n').at(-1)})`;
  // Drop run.mjs's first line (node version and date): it is printed once for the whole run.
  return result.stdout.split('\n').slice(1).join('\n').trim();
}

const sha = spawnSync('git', ['rev-parse', '--short', ref], { cwd: root, encoding: 'utf8' }).stdout.trim();
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
  cwd: root,
  encoding: 'utf8',
}).stdout.trim();
if (!sha) {
  console.error(`bench-compare: ${ref} is not a commit of this repository`);
  process.exit(2);
}
const earlier = mkdtempSync(join(tmpdir(), `ids-bench-${sha}-`));
try {
  must('git', ['worktree', 'add', '--detach', earlier, sha], root, 'git worktree add');
  must('corepack', ['pnpm', 'install', '--frozen-lockfile', '--reporter=silent'], earlier, 'install');
  must('corepack', ['pnpm', 'exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], earlier, 'build');
  const common = suitesOf(root).filter((suite) => suitesOf(earlier).includes(suite));
  const suites = wanted.length > 0 ? wanted.filter((suite) => common.includes(suite)) : common;
  console.log(
    `node ${process.version}, ${new Date().toISOString()}: ${sha} (earlier) against ${head} (this tree)`,
  );
  for (const suite of suites) {
    console.log(`\n# ${suite}\n\n## ${sha} (earlier)\n${bench(earlier, suite)}`);
    console.log(`\n## ${head} (this tree)\n${bench(root, suite)}`);
  }
  const skipped = wanted.filter((suite) => !common.includes(suite));
  if (skipped.length > 0) console.log(`\nnot in both trees, not run: ${skipped.join(', ')}`);
} finally {
  spawnSync('git', ['worktree', 'remove', '--force', earlier], { cwd: root });
  if (existsSync(earlier)) rmSync(earlier, { recursive: true, force: true });
}
