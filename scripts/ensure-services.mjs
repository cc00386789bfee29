#!/usr/bin/env node
// Makes the system programs available that the tests run for real: etcd (@ids/machine-etcd),
// Redis, PostgreSQL and MariaDB (the Redis and segment packages), Chromium (the inspector page's
// browser tests, driven by playwright-core: Playwright's own browser downloads need a host these
// machines cannot reach), ZooKeeper (@ids/machine-zookeeper; Debian's package brings a headless
// Java runtime), and promtool (@ids/server's /metrics is checked with it). The tests start their own server processes on free loopback ports;
// this script only makes sure the binaries are installed.
// One line per program (present, installed, or how to get it); apt-get's own output goes to a log
// file that the installing line names, not to the terminal. Idempotent. For each service, in order:
//   1. its *_URL / *_ENDPOINTS variable is set: the user points the tests at a server of
//      theirs; nothing to install. (CHROMIUM_BIN names the browser to launch.)
//   2. its binary is found (on PATH, or the variable naming it): nothing to do.
//   3. root with apt-get (Debian, Ubuntu, the CI image): install the Debian package, all
//      missing ones in one apt-get call.
//   4. otherwise: exit 1 saying what to install or which variable to set.
// Usage: node scripts/ensure-services.mjs [etcd] [redis] [postgres] [mariadb] [zookeeper] [chromium] [promtool]   (default: all)
import { spawnSync } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, openSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Debian installs PostgreSQL's server binaries off PATH, under /usr/lib/postgresql/<major>/bin. */
function hasPostgresServer() {
  if (process.env.PG_BIN) return executable(join(process.env.PG_BIN, 'postgres'));
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return false;
  return readdirSync(root).some((major) => executable(join(root, major, 'bin', 'postgres')));
}

/** zkServer.sh: under ZOOKEEPER_HOME when set, else where Debian's `zookeeper` puts it. */
function zkServerScript() {
  return join(process.env.ZOOKEEPER_HOME ?? '/usr/share/zookeeper', 'bin', 'zkServer.sh');
}

const SERVICES = {
  etcd: {
    external: 'ETCD_ENDPOINTS',
    present: () => (process.env.ETCD_BIN ? executable(process.env.ETCD_BIN) : onPath('etcd')),
    debian: 'etcd-server',
    howTo: [
      'The tests of @ids/machine-etcd run a real etcd server and none was found. Either install one:',
      '  Debian/Ubuntu: sudo apt-get install etcd-server    macOS: brew install etcd',
      '  elsewhere: a release binary of etcd 3.4 or newer, then set ETCD_BIN=/path/to/etcd',
      'or point the tests at a running etcd: ETCD_ENDPOINTS=http://127.0.0.1:2379',
      '(with ETCD_ENDPOINTS the cases that stop, restart or partition etcd are skipped).',
    ],
  },
  redis: {
    external: 'REDIS_URL',
    present: () =>
      process.env.REDIS_SERVER_BIN ? executable(process.env.REDIS_SERVER_BIN) : onPath('redis-server'),
    debian: 'redis-server',
    howTo: [
      'The Redis tests run a real redis-server and none was found. Either install one:',
      '  Debian/Ubuntu: sudo apt-get install redis-server    macOS: brew install redis',
      '  elsewhere: Redis 7, then set REDIS_SERVER_BIN=/path/to/redis-server',
      'or point the tests at a running Redis: REDIS_URL=redis://127.0.0.1:6379',
      '(with REDIS_URL the cases that stop, kill or restart Redis are skipped).',
    ],
  },
  postgres: {
    external: 'DATABASE_URL',
    present: hasPostgresServer,
    debian: 'postgresql',
    howTo: [
      'The PostgreSQL tests run a real PostgreSQL server and none was found. Either install one:',
      '  Debian/Ubuntu: sudo apt-get install postgresql    macOS: brew install postgresql',
      '  elsewhere: PostgreSQL 13 or newer, then set PG_BIN to the directory holding initdb and postgres',
      'or point the tests at a running server: DATABASE_URL=postgres://user@127.0.0.1:5432/db',
      '(with DATABASE_URL the cases that stop, kill or restart PostgreSQL are skipped).',
    ],
  },
  mariadb: {
    external: 'MYSQL_URL',
    // Debian puts mariadbd in /usr/sbin, off a non-root PATH.
    present: () =>
      process.env.MARIADBD_BIN
        ? executable(process.env.MARIADBD_BIN)
        : onPath('mariadbd') || executable('/usr/sbin/mariadbd'),
    debian: 'mariadb-server',
    howTo: [
      'The MySQL tests of @ids/segment run a real MariaDB server and none was found. Either install one:',
      '  Debian/Ubuntu: sudo apt-get install mariadb-server    macOS: brew install mariadb',
      '  elsewhere: MariaDB 10.6 or newer, then set MARIADBD_BIN=/path/to/mariadbd',
      'or point the tests at a running MySQL or MariaDB: MYSQL_URL=mysql://user@127.0.0.1:3306/db',
      '(with MYSQL_URL the cases that stop, kill or restart the server are skipped).',
    ],
  },
  zookeeper: {
    external: 'ZOOKEEPER_CONNECT',
    // Debian installs the server's scripts off PATH, under /usr/share/zookeeper/bin.
    present: () => executable(zkServerScript()) && onPath('java'),
    debian: 'zookeeper',
    howTo: [
      'The tests of @ids/machine-zookeeper run a real ZooKeeper (3.5 or newer) and none was found. Either install one:',
      '  Debian/Ubuntu: sudo apt-get install --no-install-recommends zookeeper    macOS: brew install zookeeper',
      '  elsewhere: an Apache ZooKeeper release and a Java runtime, then set ZOOKEEPER_HOME to its directory',
      'or point the tests at a running server: ZOOKEEPER_CONNECT=127.0.0.1:2181',
      '(with ZOOKEEPER_CONNECT the cases that stop, pause or partition ZooKeeper are skipped).',
    ],
  },
  chromium: {
    external: undefined,
    present: () =>
      process.env.CHROMIUM_BIN
        ? executable(process.env.CHROMIUM_BIN)
        : executable('/usr/bin/chromium') || onPath('chromium'),
    debian: 'chromium',
    howTo: [
      'The browser tests of @ids/inspector drive a real Chromium and none was found. Either install one:',
      '  Debian/Ubuntu: sudo apt-get install chromium',
      'or name any Chromium or Chrome executable: CHROMIUM_BIN=/path/to/chrome',
    ],
  },
  promtool: {
    external: undefined,
    present: () => (process.env.PROMTOOL_BIN ? executable(process.env.PROMTOOL_BIN) : onPath('promtool')),
    // Debian ships promtool in the server's package; nothing is started by installing it.
    debian: 'prometheus',
    howTo: [
      "The tests of @ids/server check /metrics with Prometheus's promtool and none was found. Either install it:",
      '  Debian/Ubuntu: sudo apt-get install --no-install-recommends prometheus    macOS: brew install prometheus',
      '  elsewhere: a Prometheus release archive holds promtool; then set PROMTOOL_BIN=/path/to/promtool',
    ],
  },
};

const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(SERVICES);
for (const name of wanted) {
  if (!(name in SERVICES)) {
    console.error(
      `ensure-services: unknown service ${JSON.stringify(name)}; expected one of ${Object.keys(SERVICES).join(', ')}`,
    );
    process.exit(2);
  }
}

const explainOne = (name) => SERVICES[name].howTo.join('\n');
const line = (name, what) => console.log(`${name.padEnd(10)}${what}`);

const missing = [];
for (const name of wanted) {
  const { external } = SERVICES[name];
  if (external !== undefined && process.env[external]) line(name, `external: ${external} is set`);
  else if (SERVICES[name].present()) line(name, 'present');
  else missing.push(name);
}
if (missing.length === 0) process.exit(0);

for (const [name, variable] of [
  ['chromium', 'CHROMIUM_BIN'],
  ['promtool', 'PROMTOOL_BIN'],
]) {
  if (!missing.includes(name) || !process.env[variable]) continue;
  // The user named the program: installing another one would not be the one the tests run.
  line(name, `missing: ${variable}=${process.env[variable]} is not an executable file`);
  console.error(`\n${explainOne(name)}`);
  process.exit(1);
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot || !onPath('apt-get')) {
  for (const name of missing) line(name, `missing: ${SERVICES[name].howTo[1].trim()}`);
  console.error(`\n${missing.map(explainOne).join('\n\n')}`);
  process.exit(1);
}

// apt-get and dpkg print hundreds of lines (debconf, invoke-rc.d, adduser) that say nothing a
// user acts on; they go to this file, named on screen, so a failure can still be read in full.
const logFile = join(tmpdir(), `ids-ensure-services-apt-${process.pid}.log`);
const log = openSync(logFile, 'a');
function apt(args) {
  const result = spawnSync('apt-get', args, {
    stdio: ['ignore', log, log],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const packages = missing.map((name) => SERVICES[name].debian);
console.log(`apt-get: installing ${packages.join(', ')} (its output: ${logFile})`);
// The package lists may be absent (fresh container) or stale; refresh them once, then install.
const ok =
  apt(['update', '-qq']) === 0 && apt(['install', '-y', '-qq', '--no-install-recommends', ...packages]) === 0;
closeSync(log);
const still = missing.filter((name) => !SERVICES[name].present());
for (const name of missing) {
  const { debian } = SERVICES[name];
  line(
    name,
    still.includes(name)
      ? `not installed: Debian's ${debian} did not provide it`
      : `installed: Debian's ${debian}`,
  );
}
if (!ok || still.length > 0) {
  console.error(
    `\napt-get could not install ${still.map((name) => SERVICES[name].debian).join(', ') || packages.join(', ')}; its output is in ${logFile}.\n\n${(still.length > 0 ? still : missing).map(explainOne).join('\n\n')}`,
  );
  process.exit(1);
}
