// lockFile: one holder at a time, judged and taken over as host claims are. Processes are fake
// tables here (dead pids, other namespaces) and the clock is injected; the real-process cases
// (kill -9 of a PGlite holder) are in @ids/segment's and @ids/server's tests.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LOCK_RECORD_AHEAD_MS,
  type FileLockOptions,
  FileWriteError,
  FOREIGN_CLAIM_GRACE_MS,
  HeldFileCorruptError,
  HeldFileInUseError,
  HeldFileLostError,
  lockFile,
  type ProcessTable,
} from '../src/index.js';
import { errno, fakeTable, faultyFs, readRecordAt, record, T0, tempDir, writeRecord } from './helpers.js';

const AHEAD = DEFAULT_LOCK_RECORD_AHEAD_MS;

function lockIn(dir: string, extra: FileLockOptions = {}) {
  return lockFile(join(dir, 'ids.lock'), {
    what: 'the test directory',
    clock: new FakeClock(T0),
    processes: fakeTable(100),
    releaseOnExit: false,
    ...extra,
  });
}

function heldError(run: () => unknown): HeldFileInUseError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HeldFileInUseError);
    return error as HeldFileInUseError;
  }
  throw new Error('expected HeldFileInUseError, nothing was thrown');
}

/** A fake table in PID namespace `ns` (pid 999 does not run there). */
function inNamespace(ns: string, pid: number, alive: Record<number, string> = {}): ProcessTable {
  return { ...fakeTable(pid, alive), pidNamespace: () => ns };
}

describe('lockFile', () => {
  it('creates its directory and writes a held record naming this process, ahead of the clock', () => {
    const dir = join(tempDir(), 'a', 'b');
    const lock = lockIn(dir);
    expect(lock.tookOver).toBeUndefined();
    expect(readRecordAt(dir, 'ids.lock')).toMatchObject({
      state: 'held',
      pid: 100,
      host: 'test-host',
      recordedMs: T0 + AHEAD,
    });
    lock.release();
    expect(readRecordAt(dir, 'ids.lock')).toMatchObject({ state: 'released', pid: 100, recordedMs: null });
  });

  it("a second lock in the holding process is refused, saying it is this process's", () => {
    const dir = tempDir();
    const lock = lockIn(dir);
    const error = heldError(() => lockIn(dir));
    expect(error.code).toBe('ERR_IDS_HELD_FILE_IN_USE');
    expect(error.pid).toBe(100);
    expect(error.host).toBe('test-host');
    expect(error.message).toMatch(
      /^the test directory is already open in this process \(pid 100; lock file /,
    );
    lock.release();
    lockIn(dir).release(); // free again once released
  });

  it('another live process is refused, named by pid and host; the file is left as it was', () => {
    const dir = tempDir();
    lockIn(dir, { processes: fakeTable(100, { 200: '1000' }) });
    const before = readFileSync(join(dir, 'ids.lock'), 'utf8');
    const error = heldError(() => lockIn(dir, { processes: fakeTable(200, { 100: '1000' }) }));
    expect(error.pid).toBe(100);
    expect(error.message).toMatch(
      /^the test directory is in use by pid 100 on host test-host \(held by pid 100, which is running; lock file .*ids\.lock\)/,
    );
    expect(readFileSync(join(dir, 'ids.lock'), 'utf8')).toBe(before);
  });

  it('a lock whose holder died (kill -9: no release) is taken over, as is a released one', () => {
    const dir = tempDir();
    writeRecord(dir, 'ids.lock', record({ pid: 999 }));
    const lock = lockIn(dir);
    expect(lock.tookOver).toEqual({ state: 'abandoned', pid: 999 });
    expect(readRecordAt(dir, 'ids.lock')).toMatchObject({ state: 'held', pid: 100 });
    lock.release();
    const next = lockIn(dir, { processes: fakeTable(101) });
    expect(next.tookOver).toEqual({ state: 'released', pid: 100 });
    // No token or temporary file is left behind by either takeover.
    expect(readdirSync(dir)).toEqual(['ids.lock']);
  });

  it("another host's lock is never judged: refused, naming that host", () => {
    const dir = tempDir();
    writeRecord(dir, 'ids.lock', record({ pid: 999, host: 'other-host' }));
    const error = heldError(() => lockIn(dir));
    expect(error.host).toBe('other-host');
    expect(error.message).toMatch(/pid 999 on host other-host .*which this host cannot check/);
  });

  it('another PID namespace: kept until its record lapsed by more than FOREIGN_CLAIM_GRACE_MS, then taken', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const holder = lockIn(dir, { clock, processes: inNamespace('222', 999) });
    clock.advance(AHEAD + FOREIGN_CLAIM_GRACE_MS); // not renewed since T0: lapsed, but within the grace
    expect(heldError(() => lockIn(dir, { clock, processes: inNamespace('111', 100) })).pid).toBe(999);
    clock.advance(1);
    const taken = lockIn(dir, { clock, processes: inNamespace('111', 100) });
    expect(taken.tookOver).toEqual({ state: 'abandoned', pid: 999 });
    // The old holder learns it on its next renewal or use, and stops.
    // Its record lapsed: verify renews, and finds the file replaced.
    expect(() => holder.verify()).toThrow(/was lost: the file now holds pid 100's held record/);
    expect(holder.signal.reason).toBeInstanceOf(HeldFileLostError);
    expect(holder.signal.reason).toMatchObject({ code: 'ERR_IDS_HELD_FILE_LOST', path: holder.path });
  });

  it('renewals keep a lock of another namespace alive; a holder that finds its file replaced is lost', async () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const holder = lockIn(dir, { clock, processes: inNamespace('222', 999) });
    for (let i = 0; i < 80; i++) {
      clock.advance(1000);
      await holder.renew();
    }
    expect(readRecordAt(dir, 'ids.lock').recordedMs).toBe(T0 + 80_000 + AHEAD);
    expect(heldError(() => lockIn(dir, { clock, processes: inNamespace('111', 100) })).pid).toBe(999);
    writeRecord(dir, 'ids.lock', record({ pid: 555 }));
    clock.advance(1000);
    await holder.renew();
    expect(holder.signal.aborted).toBe(true);
    expect(holder.signal.reason).toBeInstanceOf(HeldFileLostError);
    expect(() => holder.verify()).toThrow(
      /the test directory: its lock .* was lost: the file now holds pid 555/,
    );
    holder.release(); // never overwrites the new holder's file
    expect(readRecordAt(dir, 'ids.lock').pid).toBe(555);
  });

  it('release never overwrites a holding that replaced it before any renewal noticed', () => {
    const dir = tempDir();
    const lock = lockIn(dir);
    writeRecord(dir, 'ids.lock', record({ pid: 555 }));
    lock.release();
    expect(readRecordAt(dir, 'ids.lock')).toMatchObject({ state: 'held', pid: 555 });
  });

  it('verify renews synchronously when the timer fell behind, and throws once released', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const lock = lockIn(dir, { clock });
    clock.advance(AHEAD / 2);
    lock.verify(); // half the record still ahead: nothing written
    expect(readRecordAt(dir, 'ids.lock').recordedMs).toBe(T0 + AHEAD);
    clock.advance(1);
    lock.verify();
    expect(readRecordAt(dir, 'ids.lock').recordedMs).toBe(T0 + AHEAD / 2 + 1 + AHEAD);
    lock.release();
    expect(() => lock.verify()).toThrow(HeldFileLostError);
  });

  it('garbage in the lock file is HeldFileCorruptError saying what was found; never taken over', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ids.lock'), 'pid=12\n');
    const error = (() => {
      try {
        lockIn(dir);
      } catch (e) {
        return e as HeldFileCorruptError;
      }
    })();
    expect(error).toBeInstanceOf(HeldFileCorruptError);
    expect(error?.code).toBe('ERR_IDS_HELD_FILE_CORRUPT');
    expect(error?.message).toMatch(
      /ids\.lock is not a lock file: expected a JSON object, found "pid=12"; it is never taken over/,
    );
    expect(readFileSync(join(dir, 'ids.lock'), 'utf8')).toBe('pid=12\n');
    writeRecord(dir, 'ids.lock', { ...record(), pid: -4 });
    expect(() => lockIn(dir)).toThrow(/expected "pid" a positive integer/);
  });

  it('a FIFO, a link to /dev/zero or a directory at the name is HeldFileCorruptError at once: no read blocks', () => {
    const fifo = tempDir();
    execFileSync('mkfifo', [join(fifo, 'ids.lock')]);
    expect(() => lockIn(fifo)).toThrow(HeldFileCorruptError);
    const zero = tempDir();
    symlinkSync('/dev/zero', join(zero, 'ids.lock'));
    expect(() => lockIn(zero)).toThrow(/not followed/);
    const sub = tempDir();
    mkdirSync(join(sub, 'ids.lock'));
    expect(() => lockIn(sub)).toThrow(HeldFileCorruptError);
  });

  it('a directory that cannot be written, or a file where it should be, is FileWriteError; nothing left behind', () => {
    const dir = tempDir();
    const files = faultyFs({
      openSync: (p, flags, mode) => {
        if (flags === 'wx') throw errno('EACCES', 'open', p);
        return faultyFs({}).openSync(p, flags, mode);
      },
    });
    expect(() => lockIn(dir, { files })).toThrow(FileWriteError);
    expect(() => lockIn(dir, { files })).toThrow(/could not write .*ids\.lock: EACCES/);
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(join(dir, 'file'), '');
    expect(() => lockIn(join(dir, 'file', 'sub'))).toThrow(FileWriteError);
    expect(() => lockIn(join(dir, 'file'))).toThrow(/ENOTDIR/);
  });

  it('bad options are InvalidArgumentError before anything is written', () => {
    const dir = tempDir();
    expect(() => lockFile('')).toThrow(/path: expected a file path, received ""/);
    expect(() => lockIn(dir, { renewIntervalMs: 0 })).toThrow(
      /renewIntervalMs: expected an integer from 10 to /,
    );
    expect(() => lockIn(dir, { renewIntervalMs: 2000, recordAheadMs: 1000 })).toThrow(
      /recordAheadMs: expected an integer from 2000 to .*, received 1000/,
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});
