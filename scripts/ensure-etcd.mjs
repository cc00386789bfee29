#!/usr/bin/env node
// Makes an etcd server available to the tests of @ids/machine-etcd, which start their own etcd
// processes (single node, a three-member cluster, stop/restart). Quiet and quick when etcd is
// already there; idempotent. Order:
//   1. ETCD_ENDPOINTS is set: the user points the tests at an etcd of theirs; nothing to do.
//   2. an `etcd` binary is on PATH (or ETCD_BIN names one): nothing to do.
//   3. root with apt-get (Debian, Ubuntu, the CI image): install Debian's etcd-server package.
//   4. otherwise: exit 1 with what to install or which variable to set.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {}
  }
  return undefined;
}

function hasEtcd() {
  if (process.env.ETCD_BIN) {
    try {
      accessSync(process.env.ETCD_BIN, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  }
  return onPath('etcd') !== undefined;
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
  'The tests of @ids/machine-etcd run a real etcd server and none was found.',
  'Either install one so that `etcd` is on PATH:',
  '  Debian/Ubuntu: sudo apt-get install etcd-server',
  '  macOS:         brew install etcd',
  '  elsewhere:     a release binary of etcd 3.4 or newer, then set ETCD_BIN=/path/to/etcd',
  'or point the tests at a running etcd: ETCD_ENDPOINTS=http://127.0.0.1:2379',
  '(with ETCD_ENDPOINTS the cases that stop, restart or partition etcd are skipped).',
].join('\n');

if (process.env.ETCD_ENDPOINTS || hasEtcd()) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot || !onPath('apt-get')) {
  console.error(howTo);
  process.exit(1);
}

console.log("etcd is missing: installing Debian's etcd-server with apt-get");
// The package lists may be absent (fresh container) or stale; refresh them once, then install.
if (
  apt(['update', '-qq']) !== 0 ||
  apt(['install', '-y', '-qq', '--no-install-recommends', 'etcd-server']) !== 0
) {
  console.error(`\napt-get could not install etcd-server.\n\n${howTo}`);
  process.exit(1);
}
if (!hasEtcd()) {
  console.error(`\netcd-server was installed but no etcd binary is on PATH.\n\n${howTo}`);
  process.exit(1);
}
