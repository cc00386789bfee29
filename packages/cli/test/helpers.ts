import { Readable, Writable } from 'node:stream';
import type { Locks } from '@ids/lock';
import type { InterfaceList } from '@ids/machine-ip';
import { tempDirs } from '@ids/test-services';
import { expect } from 'vitest';
import type { Io } from '../src/io.js';
import { run } from '../src/run.js';

/** A host with one private IPv4 address. */
export function hostWith(address: string): () => InterfaceList {
  return () => ({
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
    eth0: [{ address, family: 'IPv4', internal: false }],
  });
}

/** A host like the ones these tests run on: a documentation-range address only. */
export const NO_PRIVATE_ADDRESS = hostWith('192.0.2.10');

/** A temporary directory `ids-cli-<label>-…`, deleted after the test file. */
export const tempDir: (label: string) => string = tempDirs('ids-cli-');

/** Host claims of these tests go here, never into the user's own claim directory. */
export const CLAIM_DIR = tempDir('claims');

class Capture extends Writable {
  text = '';
  constructor(readonly isTTY = false) {
    super();
  }
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a command printed as JSON, once it is checked to have succeeded (exit 0). */
// biome-ignore lint/suspicious/noExplicitAny: each command prints its own shape, checked by the test
export function jsonOf(result: { code: number | null; stdout: string }): any {
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

/** Runs the command line in-process with captured streams and a fake host. */
export async function ids(
  args: string[],
  {
    env = {},
    interfaces = NO_PRIVATE_ADDRESS,
    stdin,
    stderrIsTTY = false,
    now,
  }: {
    env?: Record<string, string>;
    interfaces?: () => InterfaceList;
    stdin?: string;
    stderrIsTTY?: boolean;
    /** The clock decompose judges dates by (default: the real one). */
    now?: number;
  } = {},
): Promise<RunResult> {
  const stdout = new Capture();
  const stderr = new Capture(stderrIsTTY);
  const io: Io = {
    stdout,
    stderr,
    env: { IDS_CLAIM_DIR: CLAIM_DIR, ...env },
    interfaces,
    ...(now === undefined ? {} : { now: () => now }),
    ...(stdin === undefined ? {} : { stdin: Readable.from([stdin]) }),
  };
  const code = await run(args, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * The header row of a table `ids compare` prints: a blank corner, then exactly these columns in
 * this order. The names are plain words, layout specs or scheme names: nothing to escape.
 */
export function headerRow(columns: readonly string[]): RegExp {
  return new RegExp(`^\\s+${columns.join('\\s+')}$`);
}

/** One stderr line: the command, the error's code, the message; no stack. */
export const ERROR_LINE = /^ids( [a-z-]+)?: error ERR_[A-Z0-9_]+: [^\n]+\n$/;

/**
 * Holds `name` through the library's `locks` while `run` runs `ids lock --nonblock` on the same
 * store: the CLI must see the library's lock and exit 1 with the lock's timeout error. Releases
 * the lock and closes `locks` whatever happens.
 */
export async function expectNonblockRefused(
  locks: Locks,
  name: string,
  run: () => Promise<RunResult>,
): Promise<void> {
  const held = await locks.acquire(name);
  try {
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(/ERR_IDS_LOCK_TIMEOUT/);
  } finally {
    await held.release();
    await locks.close();
  }
}
