import * as realFs from 'node:fs';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  InvalidArgumentError,
  InvalidMachineIdError,
  type MachineIdClaim,
  MachineIdProviderError,
  MachineIdRejectedError,
} from '@ids/engine';
import { describe, expect, it, vi } from 'vitest';
import { tempPath } from '../src/files.js';
import {
  FileWriteError,
  KeptFallbackError,
  KeptFileCorruptError,
  KeptFileUnreadableError,
  KeptIdOutOfRangeError,
  keptMachineId,
} from '../src/index.js';
import { createGenerator, errno, fakeTable, faultyFs, listDir, tempDir, thrown } from './helpers.js';

const bits = 16;

describe('keptMachineId: the file exists', () => {
  it('reads it and never asks the fallback', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'machine-id'), '4242\n');
    const fallback = vi.fn(() => 1);
    expect(keptMachineId({ path: join(dir, 'machine-id'), fallback })({ bits })).toBe(4242);
    expect(fallback).not.toHaveBeenCalled();
  });

  it('a corrupt file is an error naming the path and what it holds, and is left as it was', () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    for (const garbage of ['banana\n', '', '12 13\n', '-4\n', '0x10\n', '1e3\n']) {
      writeFileSync(path, garbage);
      const fallback = vi.fn(() => 1);
      const provider = keptMachineId({ path, fallback });
      expect(() => provider({ bits })).toThrow(KeptFileCorruptError);
      expect(() => provider({ bits })).toThrow(
        `${path} holds ${JSON.stringify(garbage)}; expected one decimal`,
      );
      expect(fallback).not.toHaveBeenCalled();
      expect(readFileSync(path, 'utf8')).toBe(garbage);
    }
  });

  it('an ID out of range is KeptIdOutOfRangeError (an InvalidMachineIdError), not replaced', () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    writeFileSync(path, '65536\n');
    const provider = keptMachineId({ path, fallback: () => 1 });
    expect(() => provider({ bits })).toThrow(KeptIdOutOfRangeError);
    expect(() => provider({ bits })).toThrow(
      `${path} holds machine ID 65536; expected one from 0 to 65535 (16 bits)`,
    );
    expect(() => provider({ bits: 10 })).toThrow(InvalidMachineIdError);
    writeFileSync(path, '123456789012345678901234567890\n');
    expect(() => provider({ bits })).toThrow(/holds machine ID 12345678901234567\.\.\.; expected/);
    expect(readFileSync(path, 'utf8')).toBe('123456789012345678901234567890\n');
  });

  it('an unreadable file (a directory in its place) is KeptFileUnreadableError with the system error', () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    mkdirSync(path);
    const error = thrown<KeptFileUnreadableError>(() => keptMachineId({ path, fallback: () => 1 })({ bits }));
    expect(error).toBeInstanceOf(KeptFileUnreadableError);
    expect(error.message).toMatch(`${path} exists but cannot be read: EISDIR`);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EISDIR');
  });
});

describe('keptMachineId: no file yet', () => {
  it('asks the fallback once, keeps its ID atomically, and reads it from then on', () => {
    const dir = tempDir();
    const path = join(dir, 'nested', 'machine-id');
    const fallback = vi.fn(() => 777);
    const provider = keptMachineId({ path, fallback });
    expect(provider({ bits })).toBe(777);
    expect(readFileSync(path, 'utf8')).toBe('777\n');
    expect(listDir(join(dir, 'nested'))).toEqual(['machine-id']); // no temporary file left
    expect(provider({ bits })).toBe(777);
    expect(fallback).toHaveBeenCalledTimes(1);
    expect(fallback).toHaveBeenCalledWith({ bits });
  });

  it('writes a temporary file, fsyncs it, then links it into place', () => {
    const dir = tempDir();
    const calls: string[] = [];
    const files = faultyFs({
      openSync: (p, flags, mode) => {
        calls.push(`open ${p.includes('.tmp') ? 'temp' : p} ${flags}`);
        return realFs.openSync(p, flags, mode);
      },
      fsyncSync: (fd) => {
        calls.push('fsync');
        realFs.fsyncSync(fd);
      },
      linkSync: (a, b) => {
        calls.push(`link temp -> ${b === join(dir, 'machine-id') ? 'target' : b}`);
        realFs.linkSync(a, b);
      },
    });
    keptMachineId({ path: join(dir, 'machine-id'), fallback: () => 5, files })({ bits });
    expect(calls.slice(0, 3)).toEqual(['open temp wx', 'fsync', 'link temp -> target']);
  });

  it('waits for an async fallback (the provider then returns a Promise)', async () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    const result = keptMachineId({ path, fallback: async () => 9 })({ bits });
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toBe(9);
    expect(readFileSync(path, 'utf8')).toBe('9\n');
  });

  it('a fallback that throws or rejects is KeptFallbackError with its error as cause; nothing is written', async () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    const failure = new Error('no private ip address');
    const sync = keptMachineId({
      path,
      fallback: () => {
        throw failure;
      },
    });
    expect(() => sync({ bits })).toThrow(KeptFallbackError);
    expect(() => sync({ bits })).toThrow(
      `${path} does not exist and the fallback provider failed: no private ip address`,
    );
    const rejecting = keptMachineId({ path, fallback: () => Promise.reject(failure) });
    const error = await Promise.resolve(rejecting({ bits })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeptFallbackError);
    expect((error as Error).cause).toBe(failure);
    expect(listDir(dir)).toEqual([]);
  });

  it("checks the fallback's ID before keeping it: out of range, or refused by check, keeps nothing", async () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    expect(() => keptMachineId({ path, fallback: () => 70_000 })({ bits })).toThrow(
      /the fallback provider gave machine ID 70000 \(number\); expected an integer from 0 to 65535/,
    );
    expect(() => keptMachineId({ path, fallback: () => 3, check: (id) => id !== 3 })({ bits })).toThrow(
      MachineIdRejectedError,
    );
    const asyncCheck = keptMachineId({ path, fallback: () => 3, check: async () => false })({ bits });
    await expect(asyncCheck).rejects.toThrow(MachineIdRejectedError);
    expect(listDir(dir)).toEqual([]);
    const release = vi.fn();
    const claim: MachineIdClaim = { machineId: 70_000, release };
    expect(() => keptMachineId({ path, fallback: () => claim })({ bits })).toThrow(InvalidMachineIdError);
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('a full disk (ENOSPC at the write) is FileWriteError; no file and no temporary file remain', () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    const files = faultyFs({
      writeSync: () => {
        throw errno('ENOSPC', 'write');
      },
    });
    const error = thrown<FileWriteError>(() => keptMachineId({ path, fallback: () => 5, files })({ bits }));
    expect(error).toBeInstanceOf(FileWriteError);
    expect(error.message).toMatch(`could not write ${path}: ENOSPC`);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(listDir(dir)).toEqual([]);
  });

  it('an unwritable directory is FileWriteError: EACCES at the seam, and a real path under a file', () => {
    const dir = tempDir();
    const denied = faultyFs({
      openSync: (p) => {
        throw errno('EACCES', 'open', p);
      },
    });
    expect(() =>
      keptMachineId({ path: join(dir, 'machine-id'), fallback: () => 5, files: denied })({ bits }),
    ).toThrow(/could not write .*machine-id: EACCES/);
    writeFileSync(join(dir, 'plain-file'), 'x');
    const under = join(dir, 'plain-file', 'machine-id');
    expect(() => keptMachineId({ path: under, fallback: () => 5 })({ bits })).toThrow(FileWriteError);
    expect(listDir(dir)).toEqual(['plain-file']);
  });

  it('when another process keeps an ID first, uses theirs instead of replacing it', () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    const files = faultyFs({
      linkSync: (a, b) => {
        writeFileSync(b, '31\n'); // the other process won the race just before this link
        realFs.linkSync(a, b);
      },
    });
    const release = vi.fn();
    expect(keptMachineId({ path, fallback: () => ({ machineId: 5, release }), files })({ bits })).toBe(31);
    expect(release).toHaveBeenCalledTimes(1);
    expect(readFileSync(path, 'utf8')).toBe('31\n');
    expect(listDir(dir)).toEqual(['machine-id']);
  });

  it('sweeps a temporary file left by a writer that died mid-write', () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    const table = fakeTable(100);
    const leftover = tempPath(path, { pid: 555, start: '7', host: 'test-host', boot: null });
    writeFileSync(leftover, '');
    const live = tempPath(path, { pid: 100, start: '1000', host: 'test-host', boot: null });
    writeFileSync(live, '');
    keptMachineId({ path, fallback: () => 5, processes: table })({ bits });
    expect(listDir(dir)).toEqual([live.slice(dir.length + 1), 'machine-id'].sort());
  });

  it('validates its options at once', () => {
    expect(() => keptMachineId({ path: '', fallback: () => 1 })).toThrow(InvalidArgumentError);
    expect(() => keptMachineId({ path: 'x', fallback: 5 as never })).toThrow(
      /fallback: expected a machine-ID provider/,
    );
  });

  it("a generator's machine ID; its errors arrive as MachineIdProviderError causes", async () => {
    const dir = tempDir();
    const path = join(dir, 'machine-id');
    const sonyflake = await createGenerator({ machineId: keptMachineId({ path, fallback: () => 1234 }) });
    expect(sonyflake.machine).toBe(1234);
    expect(sonyflake.decompose(await sonyflake.nextId()).machine).toBe(1234);
    writeFileSync(path, 'garbage');
    const error = await createGenerator({ machineId: keptMachineId({ path, fallback: () => 1 }) }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(MachineIdProviderError);
    expect(error.cause).toBeInstanceOf(KeptFileCorruptError);
  });
});
