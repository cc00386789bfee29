#!/usr/bin/env node
// Makes a Chromium available to the browser tests of @ids/inspector, which drive it headless with
// playwright-core (Playwright's own browser downloads are not used: they need a host this
// project's machines cannot reach). Quiet and quick when a browser is already there; idempotent.
// Order:
//   1. CHROMIUM_BIN names an executable: nothing to do (the tests launch that one).
//   2. /usr/bin/chromium (Debian's package) or a `chromium` on PATH exists: nothing to do.
//   3. root with apt-get (Debian, Ubuntu, the CI image): install Debian's chromium package.
//   4. otherwise: exit 1 with what to install or which variable to set.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function hasChromium() {
  if (process.env.CHROMIUM_BIN) return executable(process.env.CHROMIUM_BIN);
  return executable('/usr/bin/chromium') || onPath('chromium') !== undefined;
}

function apt(args) {
  const result = spawnSync('apt-get', args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const howTo = [
  'The browser tests of @ids/inspector drive a real Chromium and none was found.',
  'Either install one so that `chromium` is on PATH:',
  '  Debian/Ubuntu: sudo apt-get install chromium',
  'or name any Chromium or Chrome executable: CHROMIUM_BIN=/path/to/chrome',
].join('\n');

if (hasChromium()) process.exit(0);
if (process.env.CHROMIUM_BIN) {
  // The user named a browser: installing another one would not be the one the tests launch.
  console.error(`CHROMIUM_BIN=${process.env.CHROMIUM_BIN} is not an executable file.\n\n${howTo}`);
  process.exit(1);
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot || !onPath('apt-get')) {
  console.error(howTo);
  process.exit(1);
}

console.log("chromium is missing: installing Debian's chromium with apt-get");
// The package lists may be absent (fresh container) or stale; refresh them once, then install.
if (
  apt(['update', '-qq']) !== 0 ||
  apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium']) !== 0
) {
  console.error(`\napt-get could not install chromium.\n\n${howTo}`);
  process.exit(1);
}
if (!hasChromium()) {
  console.error(`\nchromium was installed but no chromium executable was found.\n\n${howTo}`);
  process.exit(1);
}
