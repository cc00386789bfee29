#!/usr/bin/env node
// `npm run pack [-- <folder>]`: builds the workspace, then writes one installable tarball per
// public package (packages/* that are not private) into <folder> (default: packed/). Until a
// release is published, this is how to install the packages elsewhere: install the tarballs
// you need together with the @ids ones they depend on, e.g. `npm install packed/*.tgz`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const out = resolve(process.cwd(), process.argv[2] ?? join(root, 'packed'));
const env = {
  ...process.env,
  COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  TURBO_TELEMETRY_DISABLED: '1',
  CI: process.env.CI ?? 'true',
};

function must(command, args, cwd, what) {
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`${what} failed (exit code ${result.status}): ${command} ${args.join(' ')}`);
    process.exit(result.status ?? 1);
  }
}

// The same way to pnpm as `npm start` (scripts/quickstart.mjs): corepack, with its shim on PATH for turbo.
must(process.execPath, [join(root, 'scripts', 'quickstart.mjs'), 'build'], root, 'The build');

const packages = readdirSync(join(root, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'packages', entry.name, 'package.json')))
  .map((entry) => join(root, 'packages', entry.name))
  .filter((dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private !== true);

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const dir of packages) {
  // pnpm pack replaces workspace:^ ranges with the versions, which npm pack would leave as is.
  must('corepack', ['pnpm', 'pack', '--pack-destination', out], dir, `Packing ${dir}`);
}
const made = readdirSync(out).filter((name) => name.endsWith('.tgz'));
console.log(`\n${made.length} tarballs in ${out}:\n${made.map((name) => `  ${name}`).join('\n')}`);
console.log(`Install them together, e.g.: npm install ${join(out, '*.tgz')}`);
