import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  onFreePort,
  removeScratch,
  runs,
  scratchDir,
  startTracked,
  stopChild,
  waitReady,
} from './process.js';

/** A Redis server for tests. */
export interface RedisServer {
  /** `redis://[:password@]127.0.0.1:<port>`: what clients dial. */
  readonly url: string;
  /** The port on 127.0.0.1. */
  readonly port: number;
  /** The password set with `requirepass`, if any. */
  readonly password: string | undefined;
  /** True when the server came from REDIS_URL: it cannot be stopped, killed or restarted here. */
  readonly external: boolean;
  /** True between a start and the process's exit. */
  readonly running: boolean;
  /** The server's pid (undefined for an external one, or when not running). */
  readonly pid: number | undefined;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash), then waits for the exit. */
  kill(): Promise<void>;
  /** SIGSTOP: the server stops answering but keeps its connections (a frozen host). */
  pause(): void;
  /** SIGCONT after `pause()`. */
  resume(): void;
  /**
   * Starts it again on the same port. It runs without persistence, so a restart forgets
   * every key: the case of a Redis restarted without RDB/AOF, or a failover to an empty replica.
   */
  start(): Promise<void>;
  /** Stops it and deletes its directory. Safe to call twice. */
  close(): Promise<void>;
}

/** How `startRedis` starts a server; every option has a default. */
export interface StartRedisOptions {
  /** The redis-server binary. Default: REDIS_SERVER_BIN, else `redis-server` on PATH. */
  readonly binary?: string;
  /** Sets `requirepass` so clients must authenticate. Default: none. */
  readonly password?: string;
  /** Extra `--name value` arguments for redis-server. */
  readonly args?: readonly string[];
  /** How long to wait for the server to answer PING. Default 15,000 ms. */
  readonly readyTimeoutMs?: number;
  /** Use REDIS_URL when it is set (default true); false always starts a server of our own. */
  readonly allowExternal?: boolean;
}

/** Sends PING and resolves true on any RESP reply (even -NOAUTH: the server is up). */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(/^[+-]/.test(data.toString())));
    socket.once('error', () => done(false));
  });
}

/** Whether a redis-server binary can be started here (for `describe.skipIf`). */
export function hasRedis(binary = process.env.REDIS_SERVER_BIN ?? 'redis-server'): boolean {
  return Boolean(process.env.REDIS_URL) || runs(binary);
}

/**
 * Starts a real redis-server on a free loopback port with no persistence (`--save ''
 * --appendonly no`), in a temporary directory. With REDIS_URL set, returns a handle on that
 * server instead (tests that stop or restart Redis must skip when `external` is true).
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const externalUrl = options.allowExternal === false ? undefined : process.env.REDIS_URL;
  if (externalUrl) return externalRedis(externalUrl);
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const dir = scratchDir(mkdtempSync(join(tmpdir(), 'ids-redis-')));
  let port = 0;
  const password = options.password;
  const args = () => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    ...(password === undefined ? [] : ['--requirepass', password]),
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const started = startTracked(binary, args(), { exitSignal: 'SIGKILL' });
    child = started.child;
    await waitReady(
      `redis-server on port ${port}`,
      started.child,
      () => pings(port),
      options.readyTimeoutMs ?? 15_000,
      started.output,
    );
  }

  // Later starts (a restart) use the same port: another process may take it meanwhile, which
  // such a start then reports.
  port = await onFreePort((free) => {
    port = free;
    return start();
  });
  const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  return {
    url: `redis://${auth}127.0.0.1:${port}`,
    port,
    password,
    external: false,
    get running() {
      return isRunning();
    },
    get pid() {
      return isRunning() ? child?.pid : undefined;
    },
    start,
    stop: async () => {
      if (child) await stopChild(child, 'SIGTERM');
    },
    kill: async () => {
      if (child) await stopChild(child, 'SIGKILL');
    },
    pause: () => {
      child?.kill('SIGSTOP');
    },
    resume: () => {
      child?.kill('SIGCONT');
    },
    close: async () => {
      if (child) await stopChild(child, 'SIGTERM');
      removeScratch(dir);
    },
  };
}

function externalRedis(url: string): RedisServer {
  const parsed = new URL(url);
  const refuse = async () => {
    throw new Error('this Redis came from REDIS_URL: it cannot be stopped, killed or restarted by the tests');
  };
  return {
    url,
    port: Number(parsed.port || 6379),
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    external: true,
    running: true,
    pid: undefined,
    start: async () => {},
    stop: refuse,
    kill: refuse,
    pause: () => {
      throw new Error('this Redis came from REDIS_URL: it cannot be paused by the tests');
    },
    resume: () => {},
    close: async () => {},
  };
}
