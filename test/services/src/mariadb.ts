import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, removeScratch, runs, scratchDir, startTracked, stopChild, waitReady } from './process.js';

/** A MariaDB (MySQL protocol) server for tests. */
export interface MariadbServer {
  /** `mysql://root@127.0.0.1:<port>/ids`: root without a password, the `ids` database. */
  readonly url: string;
  /** The port on 127.0.0.1. */
  readonly port: number;
  /** True when the server came from MYSQL_URL: it cannot be stopped, killed or restarted here. */
  readonly external: boolean;
  /** True between a start and the process's exit. */
  readonly running: boolean;
  /** SIGTERM (a clean shutdown), then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: the next start runs InnoDB's crash recovery). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its data directory. Safe to call twice. */
  close(): Promise<void>;
}

/** How `startMariadb` starts a server; every option has a default. */
export interface StartMariadbOptions {
  /** The mariadbd binary. Default: MARIADBD_BIN, else `mariadbd` on PATH (Debian: /usr/sbin). */
  readonly binary?: string;
  /** Extra `--name=value` arguments for mariadbd (server variables such as auto_increment_increment). */
  readonly args?: readonly string[];
  /** How long to wait for the server's greeting. Default 30,000 ms. */
  readonly readyTimeoutMs?: number;
  /** Use MYSQL_URL when it is set (default true); false always starts a server of our own. */
  readonly allowExternal?: boolean;
}

function mariadbd(): string {
  if (process.env.MARIADBD_BIN) return process.env.MARIADBD_BIN;
  // Debian installs the server in /usr/sbin, which a non-root PATH often lacks.
  return runs('mariadbd') ? 'mariadbd' : '/usr/sbin/mariadbd';
}

/** Whether a MariaDB server can be started here (for `describe.skipIf`). */
export function hasMariadb(): boolean {
  return Boolean(process.env.MYSQL_URL) || (runs(mariadbd()) && runs('mariadb-install-db'));
}

/**
 * Resolves true once the server sends its handshake (protocol version 10): it then accepts
 * logins, which a bare TCP accept during start-up does not yet promise.
 */
function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('data', (data) => done(data.length > 4 && data[4] === 10));
    socket.once('error', () => done(false));
  });
}

/**
 * Starts a real mariadbd in a temporary data directory (mariadb-install-db, root without a
 * password over TCP, loopback only, no binary log), with an `ids` database created at each
 * start. With MYSQL_URL set, returns a handle on that server instead (tests that stop or
 * restart the server must skip when `external` is true).
 */
export async function startMariadb(options: StartMariadbOptions = {}): Promise<MariadbServer> {
  const externalUrl = options.allowExternal === false ? undefined : process.env.MYSQL_URL;
  if (externalUrl) return externalMariadb(externalUrl);
  const binary = options.binary ?? mariadbd();
  const dir = scratchDir(mkdtempSync(join(tmpdir(), 'ids-mariadb-')));
  const data = join(dir, 'data');
  mkdirSync(data);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  // mariadbd refuses to run as root unless told to; as anyone else it runs as that user.
  const user = isRoot ? ['--user=root'] : [];
  const init = spawnSync(
    'mariadb-install-db',
    [
      '--no-defaults',
      `--datadir=${data}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...user,
    ],
    { encoding: 'utf8', cwd: dir },
  );
  if (init.status !== 0) {
    removeScratch(dir);
    throw new Error(`mariadb-install-db failed (${init.status}):\n${init.stderr}`);
  }
  const initFile = join(dir, 'init.sql');
  writeFileSync(initFile, 'CREATE DATABASE IF NOT EXISTS ids;\n');
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${data}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'sock')}`,
    ...user,
    '--skip-log-bin',
    '--innodb-buffer-pool-size=32M',
    '--max-connections=400',
    // Each commit is written to the OS at once, flushed to disk once a second: a killed mariadbd
    // (what the tests do) loses nothing, an OS crash would. With an fsync per commit, 50
    // processes queued on one tag's row lock on a loaded shared disk waited past the store's
    // 5 s statement timeout (the 50-process storm failed twice in two runs).
    '--innodb-flush-log-at-trx-commit=2',
    `--init-file=${initFile}`,
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const started = startTracked(binary, args, { exitSignal: 'SIGKILL', cwd: dir });
    child = started.child;
    await waitReady(
      `mariadbd on port ${port}`,
      started.child,
      () => greets(port),
      options.readyTimeoutMs ?? 30_000,
      started.output,
    );
  }

  await start();
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  return {
    url: `mysql://root@127.0.0.1:${port}/ids`,
    port,
    external: false,
    get running() {
      return isRunning();
    },
    start,
    stop: async () => {
      if (child) await stopChild(child, 'SIGTERM');
    },
    kill: async () => {
      if (child) await stopChild(child, 'SIGKILL');
    },
    close: async () => {
      if (child) await stopChild(child, 'SIGTERM');
      removeScratch(dir);
    },
  };
}

function externalMariadb(url: string): MariadbServer {
  const refuse = async () => {
    throw new Error('this MySQL came from MYSQL_URL: it cannot be stopped, killed or restarted by the tests');
  };
  return {
    url,
    port: Number(new URL(url).port || 3306),
    external: true,
    running: true,
    start: async () => {},
    stop: refuse,
    kill: refuse,
    close: async () => {},
  };
}
