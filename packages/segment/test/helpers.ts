import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DRAW = new URL('./fixtures/draw.mjs', import.meta.url).pathname;

/** What a drawing child reports when it ends. */
export interface DrawReport {
  count: number;
  errors: Record<string, number>;
  /** The first message seen for each code in `errors`. */
  messages: Record<string, string>;
  lastError?: string;
  remaining: string;
  roundTrips: number;
}

/** A job for test/fixtures/draw.mjs. */
export interface DrawJob {
  store: string;
  tag: string;
  count?: number;
  step?: number;
  fixedStep?: boolean;
  paceEvery?: number;
  /** Segments per process, each drawing in its own loop. Default 1. */
  generators?: number;
}

/** A running drawing child: wait for `started`, send `stop()`, await `done` for its IDs and report. */
export interface Drawer {
  child: ChildProcess;
  started: Promise<void>;
  /** Resolves once the child has reported `event` (see fixtures/draw.mjs); rejects if it exits first. */
  saw(event: 'unavailable' | 'resumed'): Promise<void>;
  stop(): void;
  done: Promise<Drawn>;
}

/** What a drawing child issued: every ID (generator after generator), and each generator's own. */
export interface Drawn {
  ids: BigInt64Array;
  lists: BigInt64Array[];
  report: DrawReport;
}

function readIds(path: string): BigInt64Array {
  const buffer = readFileSync(path);
  return new BigInt64Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 8);
}

export function scratch(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ids-segment-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts a child process drawing IDs (see fixtures/draw.mjs). */
export function draw(job: DrawJob, out: string): Drawer {
  const child = fork(DRAW, [JSON.stringify({ ...job, out })], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const started = new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before it started:\n${stderr}`)));
  });
  started.catch(() => undefined);
  const seen = new Set<string>();
  const isEvent = (m: unknown): m is { event: string } => typeof m === 'object' && m !== null && 'event' in m;
  child.on('message', (m) => {
    if (isEvent(m)) seen.add(m.event);
  });
  const saw = (event: string) =>
    new Promise<void>((resolve, reject) => {
      if (seen.has(event)) return resolve();
      child.on('message', (m) => {
        if (isEvent(m) && m.event === event) resolve();
      });
      child.once('exit', () => reject(new Error(`child exited before it reported '${event}':\n${stderr}`)));
    });
  const done = new Promise<Drawn>((resolve, reject) => {
    // 'close', not 'exit': 'exit' can come before the child's stdout has all been read (seen on
    // a loaded machine: the report line was still in the pipe, the parse threw in the handler,
    // and `done` never settled, so the test ran into its timeout).
    child.once('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`child exited with ${code ?? signal}:\n${stderr}\n${stdout}`));
        return;
      }
      // Read inside the handler: a child that exits 0 without its files or its report line
      // rejects `done`, never throws uncaught.
      try {
        const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as DrawReport;
        const lists = Array.from({ length: job.generators ?? 1 }, (_, g) =>
          readIds(g === 0 ? out : `${out}.${g}`),
        );
        const ids = new BigInt64Array(lists.reduce((n, l) => n + l.length, 0));
        let at = 0;
        for (const list of lists) {
          ids.set(list, at);
          at += list.length;
        }
        resolve({ ids, lists, report });
      } catch (error) {
        reject(
          new Error(`child exited 0 without its report and IDs (${String(error)}):\n${stderr}\n${stdout}`),
        );
      }
    });
  });
  return {
    child,
    started,
    saw,
    stop: () => {
      if (child.connected) child.send('stop');
    },
    done,
  };
}

/** Every ID of every child, sorted; fails the test on the first duplicate. */
export function union(lists: readonly BigInt64Array[]): { sorted: BigInt64Array; duplicates: bigint[] } {
  const total = lists.reduce((n, l) => n + l.length, 0);
  const sorted = new BigInt64Array(total);
  let at = 0;
  for (const list of lists) {
    sorted.set(list, at);
    at += list.length;
  }
  sorted.sort();
  const duplicates: bigint[] = [];
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) duplicates.push(sorted[i]!);
  return { sorted, duplicates };
}

/** Whether each child's own IDs came out strictly increasing. */
export function strictlyIncreasing(ids: BigInt64Array): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) return false;
  return true;
}
