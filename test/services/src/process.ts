import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** A server process started by this package: its child, and what to do with it at exit. */
interface Tracked {
  readonly child: ChildProcess;
  /** The signal that ends it at once (Redis: SIGKILL; PostgreSQL: SIGQUIT, its immediate shutdown). */
  readonly exitSignal: NodeJS.Signals;
}

const live = new Set<Tracked>();
const scratch = new Set<string>();
let hooked = false;

/**
 * Ends every server this process started when it exits or is told to stop: a test run that
 * fails, or is interrupted, must not leave servers behind holding ports and temporary files.
 */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const { child, exitSignal } of live) child.kill(exitSignal);
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = () => {
      for (const { child, exitSignal } of live) child.kill(exitSignal);
      process.off(signal, handler);
      // Re-raise only when nobody else listens, so the default action (exit) still happens.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, handler);
  }
}

/** Registers a temporary directory to delete at exit (and returns it). */
export function scratchDir(dir: string): string {
  hookExit();
  scratch.add(dir);
  return dir;
}

/** Deletes a temporary directory now. */
export function removeScratch(dir: string): void {
  scratch.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** A port that was free on 127.0.0.1 a moment ago (the caller binds it soon after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port of a probe server'));
      });
    });
  });
}

/**
 * Runs `start(port)` on a free port, and again on another when the server could not bind it: a
 * port found free can be taken by another process (a parallel test file, another user's run)
 * before the server binds it. Resolves with the port it started on. `pick` is a seam for tests.
 */
export async function onFreePort(
  start: (port: number) => Promise<void>,
  pick: () => Promise<number> = freePort,
  attempts = 3,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    try {
      await start(port);
      return port;
    } catch (error) {
      if (attempt >= attempts || !/address already in use/i.test(String(error))) throw error;
    }
  }
}

/** Starts `command`, tracked so that it is ended when this process exits. */
export function startTracked(
  command: string,
  args: readonly string[],
  options: {
    exitSignal: NodeJS.Signals;
    uid?: number;
    gid?: number;
    cwd?: string;
    env?: NodeJS.ProcessEnv;
  },
): { child: ChildProcess; output: () => string } {
  hookExit();
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const tracked: Tracked = { child, exitSignal: options.exitSignal };
  live.add(tracked);
  let log = '';
  const keep = (chunk: Buffer) => {
    // The last 8 KiB is enough to say why a server did not start.
    log = (log + chunk.toString()).slice(-8192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', () => live.delete(tracked));
  return { child, output: () => log };
}

/** Resolves when the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Sends `signal` and waits for the exit; SIGKILL after `graceMs` if it is still there. */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs = 10_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // A paused server does not act on SIGTERM until it runs again.
  child.kill('SIGCONT');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

/** True when a TCP connection to 127.0.0.1:port is accepted. */
export function accepts(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls `ready` every 20 ms until it is true, the child exits, or the time is up. */
export async function waitReady(
  what: string,
  child: ChildProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited during start-up (${child.exitCode ?? child.signalCode}):\n${output()}`);
    }
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${output()}`);
}

/** Whether `command --version` runs (the binary is installed and executable). */
export function runs(command: string): boolean {
  const result = spawnSync(command, ['--version'], { stdio: 'ignore' });
  return result.status === 0;
}
