import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@ids/test-services';

export const fixture = (name: string) => join(__dirname, 'fixtures', name);

/** A temporary directory `ids-<label>-…`, deleted after the test file. */
export const tempDir: (label: string) => string = tempDirs('ids-');

/** IDs written as raw little-endian 64-bit words (what the fixtures write). */
export function readIds(path: string): bigint[] {
  const bytes = readFileSync(path);
  const words = new BigUint64Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 8));
  return Array.from(words);
}

export function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8'));
}

export function listDir(dir: string): string[] {
  return readdirSync(dir).sort();
}

export interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a fixture with node and collects its output. */
export function run(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<Run> & { pid: number; child: ChildProcess } {
  const child = spawn(process.execPath, [fixture(script), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return Object.assign(done, { pid: child.pid as number, child });
}

/** Strictly increasing? */
export function increasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) return false;
  return true;
}

export function max(ids: readonly bigint[]): bigint {
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.max does not take
  return ids.reduce((a, b) => (a > b ? a : b));
}

export function min(ids: readonly bigint[]): bigint {
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
  return ids.reduce((a, b) => (a < b ? a : b));
}
