import * as realFs from 'node:fs';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock, InvalidArgumentError, MachineIdLostError, tickStartMs } from '@ids/engine';
import { gate } from '@ids/test-services';
import { describe, expect, it, vi } from 'vitest';
import { tempPath } from '../src/files.js';
import {
  ClaimDirError,
  claimHostMachineId,
  DEFAULT_CLAIM_RECORD_AHEAD_MS,
  FileWriteError,
  HeldFileCorruptError,
  HeldFileInUseError,
  HeldFileLostError,
  hostClaim,
  NoFreeMachineIdError,
  systemProcesses,
} from '../src/index.js';
import {
  BITS,
  claimedGenerator,
  claimIn,
  createGenerator,
  errno,
  fakeTable,
  faultyFs,
  listDir,
  readRecordAt,
  record,
  T0,
  tempDir,
  thrown,
  writeRecord,
} from './helpers.js';

const AHEAD = DEFAULT_CLAIM_RECORD_AHEAD_MS;

describe('host claims: taking a machine ID', () => {
  it('takes the lowest free ID, writing pid, start, host, boot and a record ahead of the clock', () => {
    const dir = tempDir();
    const claim = claimIn(dir);
    expect(claim.machineId).toBe(0);
    expect(claim.path).toBe(join(dir, '0.claim'));
    expect(claim.notBefore).toBeUndefined();
    expect(claim.tookOver).toBeUndefined();
    expect(readRecordAt(dir, '0.claim')).toMatchObject({
      v: 1,
      state: 'held',
      pid: 100,
      start: '1000',
      host: 'test-host',
      boot: 'boot-1',
      recordedMs: T0 + AHEAD,
    });
    expect(listDir(dir)).toEqual(['0.claim']);
  });

  it('a second claimer of the same host gets the next ID while the first holds its claim', () => {
    const dir = tempDir();
    expect(claimIn(dir).machineId).toBe(0);
    expect(claimIn(dir, { processes: fakeTable(101, { 100: '1000' }) }).machineId).toBe(1);
    expect(claimIn(dir, { processes: fakeTable(102, { 100: '1000', 101: '1000' }) }).machineId).toBe(2);
  });

  it('release records the clock, and the next holder starts after that record', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const first = claimIn(dir, { clock });
    clock.advance(1234);
    first.release();
    expect(readRecordAt(dir, '0.claim')).toMatchObject({
      state: 'released',
      pid: 100,
      recordedMs: T0 + 1234,
    });
    const second = claimIn(dir, { clock, processes: fakeTable(200) });
    expect(second.machineId).toBe(0);
    expect(second.notBefore).toBe(T0 + 1234);
    expect(second.tookOver).toEqual({ state: 'released', pid: 100, recordedMs: T0 + 1234 });
    expect(second.describe()).toMatch(/released by pid 100; IDs start after/);
    expect(listDir(dir)).toEqual(['0.claim']); // the takeover token is gone
  });

  it('release never records below what an earlier holder or the generator recorded', () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ state: 'released', recordedMs: T0 + 50_000 }));
    const clock = new FakeClock(T0);
    // Exactly ID 0: in a range, a record this far ahead is passed over while another ID is free.
    const claim = claimIn(dir, { clock, min: 0, max: 0 });
    claim.record(T0 + 70_000);
    claim.record(T0 + 60_000); // lower: ignored
    claim.release();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 70_000);
  });

  it('if the clock went back during the claim, release keeps the record ahead of the highest clock seen', async () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const claim = claimIn(dir, { clock });
    clock.advance(5000);
    await claim.refresh();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 5000 + AHEAD);
    clock.set(T0 + 1000); // stepped back 4 s
    claim.release();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 5000 + AHEAD);
  });

  it("takes over the claim of a dead pid; the new holder starts after the dead one's record", () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ pid: 999, recordedMs: T0 + 300 }));
    const claim = claimIn(dir);
    expect(claim.machineId).toBe(0);
    expect(claim.notBefore).toBe(T0 + 300);
    expect(claim.tookOver).toEqual({ state: 'abandoned', pid: 999, recordedMs: T0 + 300 });
    expect(claim.describe()).toMatch(/taken over: pid 999 is not running/);
    expect(readRecordAt(dir, '0.claim')).toMatchObject({ state: 'held', pid: 100, recordedMs: T0 + AHEAD });
  });

  it('takes over a claim whose pid now belongs to another process (real /proc: this pid, another start)', () => {
    const dir = tempDir();
    const start = systemProcesses.startOf(process.pid);
    expect(start).toMatch(/^\d+$/); // these machines have /proc; the test would be void without it
    const host = systemProcesses.hostname();
    const boot = systemProcesses.bootId() ?? null;
    writeRecord(dir, '0.claim', record({ pid: process.pid, start: String(Number(start) + 1), host, boot }));
    writeRecord(
      dir,
      '1.claim',
      record({ pid: process.pid, start: start!, host, boot, nonce: 'cd'.repeat(12) }),
    );
    const claim = claimHostMachineId(BITS, { dir, releaseOnExit: false });
    expect(claim.machineId).toBe(0);
    expect(claim.describe()).toMatch(new RegExp(`pid ${process.pid} now belongs to another process`));
    // With the right start the same pid is alive: ID 1 is held, so the next claim gets 2.
    expect(claimHostMachineId(BITS, { dir, releaseOnExit: false }).machineId).toBe(2);
  });

  it('takes over the claim of a previous boot; never one of another host', () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ pid: 100, start: '1000', boot: 'boot-0' }));
    writeRecord(dir, '1.claim', record({ pid: 5, host: 'other-host', nonce: 'cd'.repeat(12) }));
    const table = fakeTable(100, {}, 'test-host', 'boot-1');
    expect(claimIn(dir, { processes: table }).describe()).toMatch(/pid 100 ran before this host last booted/);
    expect(claimIn(dir, { processes: fakeTable(101, { 100: '1000' }) }).machineId).toBe(2);
  });

  it('min === max claims exactly that ID, or fails with HeldFileInUseError naming the holder', () => {
    const dir = tempDir();
    expect(claimIn(dir, { min: 7, max: 7 }).machineId).toBe(7);
    expect(() => claimIn(dir, { min: 7, max: 7, processes: fakeTable(101, { 100: '1000' }) })).toThrow(
      HeldFileInUseError,
    );
    expect(() => claimIn(dir, { min: 7, max: 7, processes: fakeTable(101, { 100: '1000' }) })).toThrow(
      /machine ID 7 is not free in .*: held by pid 100, which is running/,
    );
    // The same error as a lock file's: the file and its holder as fields.
    expect(
      thrown(() => claimIn(dir, { min: 7, max: 7, processes: fakeTable(101, { 100: '1000' }) })),
    ).toMatchObject({
      code: 'ERR_IDS_HELD_FILE_IN_USE',
      path: join(dir, '7.claim'),
      pid: 100,
      host: 'test-host',
    });
  });

  it('a full range is NoFreeMachineIdError listing why', () => {
    const dir = tempDir();
    claimIn(dir, { min: 0, max: 1 });
    claimIn(dir, { min: 0, max: 1 });
    expect(() => claimIn(dir, { min: 0, max: 1, processes: fakeTable(101, { 100: '1000' }) })).toThrow(
      NoFreeMachineIdError,
    );
  });

  it('validates its options when the provider runs', () => {
    const dir = tempDir();
    expect(() => claimIn(dir, { min: -1 })).toThrow(InvalidArgumentError);
    expect(() => claimIn(dir, { min: 5, max: 4 })).toThrow(
      /max: expected an integer from 5 to 65535, received 4/,
    );
    expect(() => claimIn(dir, { max: 65_536 })).toThrow(/max: expected an integer from 0 to 65535/);
    expect(() => claimIn(dir, { recordIntervalMs: 1000, recordAheadMs: 500 })).toThrow(/recordAheadMs/);
    expect(() => hostClaim({ dir, clock: { now: 'x' } as never })({ bits: BITS })).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('host claims: garbage and faults', () => {
  it('a garbage claim file is never taken: skipped (reported) in a range, an error for that exact ID', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '0.claim'), 'not json at all');
    const onError = vi.fn();
    expect(claimIn(dir, { onError }).machineId).toBe(1);
    expect(onError).toHaveBeenCalledWith(expect.any(HeldFileCorruptError));
    expect(onError.mock.calls[0]![0].message).toMatch(
      `${join(dir, '0.claim')} is not a claim file: expected a JSON object, found "not json at all"`,
    );
    expect(() => claimIn(dir, { min: 0, max: 0 })).toThrow(HeldFileCorruptError);
    expect(realFs.readFileSync(join(dir, '0.claim'), 'utf8')).toBe('not json at all');
  });

  it('a pid that is not a number is HeldFileCorruptError saying what was expected', () => {
    const dir = tempDir();
    for (const pid of ['abc', -3, 1.5, null]) {
      writeRecord(dir, '0.claim', { ...record(), pid } as never);
      expect(() => claimIn(dir, { min: 0, max: 0 })).toThrow(/expected "pid" a positive integer, found/);
    }
    writeRecord(dir, '0.claim', { ...record(), start: 'yesterday' } as never);
    expect(() => claimIn(dir, { min: 0, max: 0 })).toThrow(/expected "start" a string of digits or null/);
  });

  it('an unusable directory is ClaimDirError naming it: a file in its place, or EACCES at the seam', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    expect(() => claimIn(join(dir, 'file'))).toThrow(ClaimDirError);
    expect(() => claimIn(join(dir, 'file', 'claims'))).toThrow(
      /the claim directory .*file\/claims cannot be used: ENOTDIR.*set IDS_CLAIM_DIR/,
    );
    const files = faultyFs({
      mkdirSync: (p) => {
        throw errno('EACCES', 'mkdir', p);
      },
    });
    expect(() => claimIn(join(dir, 'x'), { files })).toThrow(/cannot be used: EACCES/);
  });

  it('an unwritable directory (EACCES creating files) is FileWriteError; nothing is left behind', () => {
    const dir = tempDir();
    const files = faultyFs({
      openSync: (p, flags, mode) => {
        if (flags === 'wx') throw errno('EACCES', 'open', p);
        return realFs.openSync(p, flags, mode);
      },
    });
    expect(() => claimIn(dir, { files })).toThrow(FileWriteError);
    expect(listDir(dir)).toEqual([]);
  });

  it('a full disk at claim time is FileWriteError with the ENOSPC cause; once space is back, the claim works', () => {
    const dir = tempDir();
    let full = true;
    const files = faultyFs({
      writeSync: (fd, data, offset, length) => {
        if (full) throw errno('ENOSPC', 'write');
        return realFs.writeSync(fd, data, offset, length);
      },
    });
    const error = thrown<FileWriteError>(() => claimIn(dir, { files }));
    expect(error).toBeInstanceOf(FileWriteError);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(listDir(dir)).toEqual([]);
    full = false;
    expect(claimIn(dir, { files }).machineId).toBe(0);
  });

  it('a full disk while renewing goes to onError; the claim stays held and can still be released', async () => {
    const dir = tempDir();
    let full = false;
    const files = faultyFs({
      open: async (p, flags, mode) => {
        if (full) throw errno('ENOSPC', 'open', p);
        return realFs.promises.open(p, flags, mode);
      },
    });
    const onError = vi.fn();
    const clock = new FakeClock(T0);
    const claim = claimIn(dir, { files, onError, clock });
    full = true;
    clock.advance(500);
    await claim.refresh();
    expect(onError).toHaveBeenCalledWith(expect.any(FileWriteError));
    expect(claim.signal.aborted).toBe(false);
    expect(readRecordAt(dir, '0.claim')).toMatchObject({ state: 'held', recordedMs: T0 + AHEAD });
    claim.release();
    expect(readRecordAt(dir, '0.claim')).toMatchObject({ state: 'released', recordedMs: T0 + 500 });
    expect(listDir(dir)).toEqual(['0.claim']);
  });

  it('a release during a renewal waits for it, and leaves no temporary file behind', async () => {
    const dir = tempDir();
    const slowWrite = gate();
    const files = faultyFs({
      open: async (p, flags, mode) => {
        const file = await realFs.promises.open(p, flags, mode);
        await slowWrite.opened; // the renewal's write is slow
        return file;
      },
    });
    const clock = new FakeClock(T0);
    const claim = claimIn(dir, { files, clock });
    const renewal = claim.refresh();
    clock.advance(100);
    const released = claim.release();
    expect(released).toBeInstanceOf(Promise);
    expect(readRecordAt(dir, '0.claim').state).toBe('held');
    slowWrite.open();
    await released;
    await renewal;
    expect(readRecordAt(dir, '0.claim')).toMatchObject({ state: 'released', recordedMs: T0 + 100 });
    expect(listDir(dir)).toEqual(['0.claim']);
  });

  it('a claim found replaced is lost: its signal aborts and a generator on it stops issuing IDs', async () => {
    const { dir, claim, sonyflake } = claimedGenerator();
    sonyflake.nextIdSync();
    writeRecord(dir, '0.claim', record({ pid: 4321 }));
    await claim.refresh();
    expect(claim.signal.aborted).toBe(true);
    expect(claim.signal.reason).toBeInstanceOf(HeldFileLostError);
    expect(claim.signal.reason.message).toMatch(
      /machine ID 0 was lost: the file now holds pid 4321's held claim/,
    );
    expect(() => sonyflake.nextIdSync()).toThrow(MachineIdLostError);
    // A lost claim writes nothing more: the other holder's file stays as it is.
    await sonyflake.close();
    expect(readRecordAt(dir, '0.claim').pid).toBe(4321);
  });

  it('renewal records ahead of the clock and follows the generator; it never lowers the record', async () => {
    const { dir, clock, claim, sonyflake } = claimedGenerator();
    clock.advance(2000);
    sonyflake.nextIdSync();
    await claim.refresh();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 2000 + AHEAD);
    claim.record(T0 + 10_000);
    await claim.refresh();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 10_000);
    clock.set(T0); // back: the record stays
    await claim.refresh();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 10_000);
    await sonyflake.close();
  });

  it("a generator's close() records the last tick, then releases the claim", async () => {
    const dir = tempDir();
    const clock = new FakeClock(T0 + 3);
    const claim = claimIn(dir, { clock });
    const sonyflake = await createGenerator({ machineId: hostClaim({ dir, clock, releaseOnExit: false }) });
    expect(sonyflake.machine).toBe(1); // claim above holds 0
    const id = await sonyflake.nextId();
    await sonyflake.close();
    const tick = sonyflake.decompose(id).time;
    const released = readRecordAt(dir, '1.claim');
    expect(released.state).toBe('released');
    expect(released.recordedMs).toBeGreaterThanOrEqual(tickStartMs(sonyflake.layout, tick + 1) - 1);
    claim.release();
  });
});

describe('host claims: racing takeovers (forced at the seam)', () => {
  it('two claimers of one abandoned claim: exactly one takes it, the other looks again', () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ pid: 999 }));
    let other: ReturnType<typeof claimIn> | undefined;
    // A has read the abandoned claim and is about to take its token; B does the whole takeover first.
    const files = faultyFs({
      linkSync: (a, b) => {
        if (b.includes('~') && other === undefined) {
          other = claimIn(dir, { processes: fakeTable(200, { 100: '1000' }) });
        }
        realFs.linkSync(a, b);
      },
    });
    const a = claimIn(dir, { files, processes: fakeTable(100, { 200: '1000' }) });
    expect(other?.machineId).toBe(0);
    expect(a.machineId).toBe(1);
    expect(readRecordAt(dir, '0.claim').pid).toBe(200);
    expect(readRecordAt(dir, '1.claim').pid).toBe(100);
    expect(listDir(dir)).toEqual(['0.claim', '1.claim']);
  });

  it('a claimer that read the claim before a takeover finished cannot replace the new holder', () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ pid: 999 }));
    let stepped = false;
    // A has taken the token; B reads the same abandoned claim and finds A's token: B looks elsewhere.
    const files = faultyFs({
      renameSync: (from, to) => {
        if (to.endsWith('0.claim') && !stepped) {
          stepped = true;
          const b = claimIn(dir, { processes: fakeTable(200, { 100: '1000' }) });
          expect(b.machineId).toBe(1);
        }
        realFs.renameSync(from, to);
      },
    });
    const a = claimIn(dir, { files, processes: fakeTable(100, { 200: '1000' }) });
    expect(a.machineId).toBe(0);
    expect(readRecordAt(dir, '0.claim').pid).toBe(100);
    expect(readRecordAt(dir, '1.claim').pid).toBe(200);
  });

  it('a token left by a claimer that died mid-takeover is taken over in turn, and removed', () => {
    const dir = tempDir();
    const stale = record({ pid: 999, nonce: 'ab'.repeat(12) });
    writeRecord(dir, '0.claim', stale);
    writeRecord(
      dir,
      `0.claim~${stale.nonce}`,
      record({ pid: 998, state: 'token', nonce: 'ef'.repeat(12), recordedMs: null }),
    );
    const claim = claimIn(dir);
    expect(claim.machineId).toBe(0);
    expect(listDir(dir)).toEqual(['0.claim']);
  });

  it("sweeps tokens and temporary files of dead processes, never a live one's", () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ pid: 300, nonce: '12'.repeat(12) }));
    // Died after replacing 5.claim, before removing its token; and one died mid-write.
    writeRecord(dir, `5.claim~${'34'.repeat(12)}`, record({ pid: 998, state: 'token', recordedMs: null }));
    const deadTemp = tempPath(join(dir, '5.claim'), { pid: 997, start: '1', host: 'test-host', boot: null });
    writeFileSync(deadTemp, '{"half":');
    // A live process's token and temporary file stay.
    const liveToken = `9.claim~${'56'.repeat(12)}`;
    writeRecord(dir, liveToken, record({ pid: 300, state: 'token', recordedMs: null }));
    const liveTemp = tempPath(join(dir, '9.claim'), {
      pid: 300,
      start: '1000',
      host: 'test-host',
      boot: null,
    });
    writeFileSync(liveTemp, '');
    const claim = claimIn(dir, { processes: fakeTable(100, { 300: '1000' }) });
    expect(claim.machineId).toBe(1);
    expect(listDir(dir)).toEqual([liveTemp.slice(dir.length + 1), '0.claim', '1.claim', liveToken].sort());
  });
});
