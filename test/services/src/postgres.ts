import { type ChildProcess, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import {
  accepts,
  onFreePort,
  removeScratch,
  scratchDir,
  startTracked,
  stopChild,
  waitReady,
} from './process.js';

/** A PostgreSQL server for tests. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string;
  /** The port on 127.0.0.1. */
  readonly port: number;
  /** True when the server came from DATABASE_URL: it cannot be stopped, killed or restarted here. */
  readonly external: boolean;
  /** True between a start and the process's exit. */
  readonly running: boolean;
  /** SIGINT (PostgreSQL's fast shutdown), then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL of the postmaster (a crash: the next start runs crash recovery). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its cluster. Safe to call twice. */
  close(): Promise<void>;
}

/** How `startPostgres` starts a server; every option has a default. */
export interface StartPostgresOptions {
  /** The directory holding initdb, postgres and pg_isready. Default: PG_BIN, else the newest /usr/lib/postgresql/N/bin. */
  readonly binDir?: string;
  /** How long to wait for the server to accept connections. Default 30,000 ms. */
  readonly readyTimeoutMs?: number;
  /** Use DATABASE_URL when it is set (default true); false always starts a server of our own. */
  readonly allowExternal?: boolean;
}

/** The newest Debian PostgreSQL bin directory, or undefined. */
export function postgresBinDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Whether a PostgreSQL server can be started here (for `describe.skipIf`). */
export function hasPostgres(): boolean {
  return Boolean(process.env.DATABASE_URL) || postgresBinDir() !== undefined;
}

/**
 * PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user
 * (Debian's package creates it) and the server runs under its uid; otherwise it runs as us.
 */
function runAs(): { uid?: number; gid?: number } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0 || gid.status !== 0) {
    throw new Error('running as root and there is no `postgres` user to own a test cluster');
  }
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * Starts a real PostgreSQL in a temporary cluster (initdb, trust authentication, loopback
 * only, its socket in the cluster's directory). With DATABASE_URL set, returns a handle on that
 * server instead (tests that stop or restart the server must skip when `external` is true).
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const externalUrl = options.allowExternal === false ? undefined : process.env.DATABASE_URL;
  if (externalUrl) return externalPostgres(externalUrl);
  const binDir = options.binDir ?? postgresBinDir();
  if (!binDir) {
    throw new Error(
      "no PostgreSQL found: install Debian's postgresql package, set PG_BIN, or set DATABASE_URL",
    );
  }
  const owner = runAs();
  const dir = scratchDir(mkdtempSync(join(tmpdir(), 'ids-pg-')));
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  if (owner.uid !== undefined && owner.gid !== undefined) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(data, owner.uid, owner.gid);
  }
  const init = spawnSync(
    join(binDir, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { encoding: 'utf8', ...owner, cwd: dir },
  );
  if (init.status !== 0) {
    removeScratch(dir);
    throw new Error(`initdb failed (${init.status}) as ${owner.uid ?? userInfo().username}:\n${init.stderr}`);
  }
  let port = 0;
  const args = () => [
    '-D',
    data,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dir,
    '-c',
    'max_connections=300',
  ];
  let child: ChildProcess | undefined;
  const isReady = async () =>
    spawnSync(join(binDir, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '1'], {
      stdio: 'ignore',
    }).status === 0;

  async function start(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const started = startTracked(join(binDir as string, 'postgres'), args(), {
      exitSignal: 'SIGQUIT',
      ...owner,
      cwd: dir,
    });
    child = started.child;
    await waitReady(
      `postgres on port ${port}`,
      started.child,
      isReady,
      options.readyTimeoutMs ?? 30_000,
      started.output,
    );
  }

  // Later starts (a restart) use the same port: another process may take it meanwhile, which
  // such a start then reports.
  port = await onFreePort((free) => {
    port = free;
    return start();
  });
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    external: false,
    get running() {
      return isRunning();
    },
    start,
    stop: async () => {
      if (child) await stopChild(child, 'SIGINT');
    },
    kill: async () => {
      if (!child) return;
      await stopChild(child, 'SIGKILL');
      // A backend forked for a connection just before the kill still holds the listening socket
      // until it closes its copy (it notices the postmaster's death and exits): a test that
      // killed the server expects the port to refuse, so wait until it does.
      const end = performance.now() + 10_000;
      while ((await accepts(port, 200)) && performance.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: async () => {
      if (child) await stopChild(child, 'SIGINT');
      removeScratch(dir);
    },
  };
}

function externalPostgres(url: string): PostgresServer {
  const refuse = async () => {
    throw new Error(
      'this PostgreSQL came from DATABASE_URL: it cannot be stopped, killed or restarted by the tests',
    );
  };
  return {
    url,
    port: Number(new URL(url).port || 5432),
    external: true,
    running: true,
    start: async () => {},
    stop: refuse,
    kill: refuse,
    close: async () => {},
  };
}
