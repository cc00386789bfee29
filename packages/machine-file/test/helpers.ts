import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@ids/engine';
import {
  claimHostMachineId,
  type FileSystem,
  type HostClaimOptions,
  nodeFileSystem,
  type ProcessTable,
} from '../src/index.js';
import type { ClaimRecord } from '../src/record.js';

export const T0 = Date.UTC(2026, 10, 22, 12);

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ids-machine-file-'));
}

/**
 * A process table for tests: `alive` pids exist (with the given start tokens), all others are
 * dead. Host and boot are fixed, so records written under it can be judged by it.
 */
export function fakeTable(
  pid: number,
  alive: Record<number, string> = {},
  host = 'test-host',
  boot = 'boot-1',
): ProcessTable {
  const starts: Record<number, string> = { [pid]: '1000', ...alive };
  return {
    pid,
    exists: (p) => p in starts,
    startOf: (p) => starts[p],
    bootId: () => boot,
    hostname: () => host,
  };
}

export function record(extra: Partial<ClaimRecord> = {}): ClaimRecord {
  return {
    v: 1,
    state: 'held',
    pid: 999,
    start: '1000',
    host: 'test-host',
    boot: 'boot-1',
    nonce: 'ab'.repeat(12),
    recordedMs: T0,
    ...extra,
  };
}

export function writeRecord(dir: string, name: string, r: ClaimRecord): void {
  writeFileSync(join(dir, name), `${JSON.stringify(r)}\n`);
}

export function readRecordAt(dir: string, name: string): ClaimRecord {
  return JSON.parse(readFileSync(join(dir, name), 'utf8'));
}

export function listDir(dir: string): string[] {
  return readdirSync(dir).sort();
}

/** An errno error as node:fs throws them. */
export function errno(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  const error = new Error(
    `${code}: simulated, ${syscall}${path ? ` '${path}'` : ''}`,
  ) as NodeJS.ErrnoException;
  error.code = code;
  error.syscall = syscall;
  return error;
}

/** node:fs with some calls replaced: the seam where faults are injected. */
export function faultyFs(overrides: Partial<FileSystem>): FileSystem {
  return { ...nodeFileSystem, ...overrides };
}

/** The error `fn` throws; fails the test if it throws nothing. */
export function thrown<T extends Error = Error>(fn: () => unknown): T {
  try {
    fn();
  } catch (error) {
    return error as T;
  }
  throw new Error('expected a throw, but nothing was thrown');
}

/** A 16-bit host claim in `dir` on a fake clock at T0 and a fake process table (pid 100), not released at exit. */
export function claimIn(dir: string, extra: HostClaimOptions = {}) {
  return claimHostMachineId(16, {
    dir,
    clock: new FakeClock(T0),
    processes: fakeTable(100),
    releaseOnExit: false,
    ...extra,
  });
}
