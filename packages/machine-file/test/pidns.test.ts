import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FakeClock, MachineIdLostError } from '@ids/engine';
import { afterEach, describe, expect, it } from 'vitest';
import {
  claimHostMachineId,
  DEFAULT_CLAIM_RECORD_AHEAD_MS,
  FOREIGN_CLAIM_GRACE_MS,
  HeldFileLostError,
  type HostClaimOptions,
  type ProcessTable,
  systemProcesses,
} from '../src/index.js';
import {
  BITS,
  claimedGenerator,
  fakeTable,
  readRecordAt,
  record,
  T0,
  tempDir,
  writeRecord,
} from './helpers.js';

const AHEAD = DEFAULT_CLAIM_RECORD_AHEAD_MS;
const DIST = pathToFileURL(join(__dirname, '..', 'dist', 'index.js')).href;

/** A fake table in PID namespace `ns`: pid 999 is not running there (as a pid of another namespace would not be). */
function inNamespace(ns: string, pid = 100, alive: Record<number, string> = {}): ProcessTable {
  return { ...fakeTable(pid, alive), pidNamespace: () => ns };
}

function claimIn(dir: string, extra: HostClaimOptions = {}) {
  return claimHostMachineId(BITS, {
    dir,
    clock: new FakeClock(T0),
    processes: inNamespace('111'),
    releaseOnExit: false,
    ...extra,
  });
}

describe('claims across PID namespaces (fake tables)', () => {
  it('a claim of another PID namespace is never judged by pid: kept while its record is renewed, taken once it lapsed', () => {
    const dir = tempDir();
    // pid 999 does not exist in this namespace; in its own it may well be running.
    writeRecord(dir, '0.claim', { ...record({ pid: 999, recordedMs: T0 + AHEAD }), pidns: '222' } as never);
    const clock = new FakeClock(T0);
    expect(claimIn(dir, { clock }).machineId).toBe(1);
    clock.set(T0 + AHEAD + FOREIGN_CLAIM_GRACE_MS); // lapsed, but not by more than the grace
    expect(claimIn(dir, { clock, processes: inNamespace('111', 101, { 100: '1000' }) }).machineId).toBe(2);
    clock.advance(1);
    const taken = claimIn(dir, { clock, min: 0, max: 0, processes: inNamespace('111', 102) });
    expect(taken.describe()).toMatch(/pid 999 of another PID namespace \(222.*stopped renewing its record/);
    expect(taken.notBefore).toBe(T0 + AHEAD);
    expect(readRecordAt(dir, '0.claim')).toMatchObject({ pid: 102, pidns: '111' });
  });

  it('the holder renews synchronously before issuing past its record when its timer fell behind', () => {
    const { dir, clock, claim, sonyflake } = claimedGenerator(claimIn);
    clock.advance(5000); // the event loop was busy: no renewal ran
    sonyflake.nextIdSync();
    expect(readRecordAt(dir, '0.claim').recordedMs).toBe(T0 + 5000 + AHEAD);
    claim.release();
  });

  it('a holder whose renewal comes later than the grace after its record lapsed fences itself', async () => {
    const { clock, claim, sonyflake } = claimedGenerator(claimIn);
    sonyflake.nextIdSync();
    clock.advance(AHEAD + FOREIGN_CLAIM_GRACE_MS + 1); // stopped (SIGSTOP, suspend) that long
    await claim.refresh();
    expect(claim.signal.reason).toBeInstanceOf(HeldFileLostError);
    expect(claim.signal.reason.message).toMatch(/renewed \d+ ms after it lapsed/);
    expect(() => sonyflake.nextIdSync()).toThrow(MachineIdLostError);
    await sonyflake.close();
  });
});

// Real PID namespaces: `unshare --pid --fork --mount-proc` gives the child its own pids and
// /proc, as a container does, on the same host name, boot and claim directory.
const unshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']);
const canUnshare = unshare.status === 0;

const HOLDER = `
  const m = await import(${JSON.stringify(DIST)});
  const claim = m.claimHostMachineId(16, { dir: process.argv[1], releaseOnExit: false });
  console.log(JSON.stringify({ machineId: claim.machineId, describe: claim.describe(), pid: process.pid }));
  process.stdin.resume();
  process.stdin.on('end', () => { claim.release(); process.exit(0); });`;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** Starts a holder in a new PID namespace; resolves with what it claimed once it holds it. */
function holderInNamespace(dir: string): Promise<{ machineId: number; describe: string; pid: number }> {
  const child = spawn(
    'unshare',
    ['--pid', '--fork', '--mount-proc', process.execPath, '--input-type=module', '-e', HOLDER, dir],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(JSON.parse(out));
    });
    child.stderr!.on('data', (chunk) => {
      err += chunk;
    });
    child.on('exit', (code) => reject(new Error(`the holder exited with ${code}: ${err}`)));
  });
}

describe.skipIf(!canUnshare)(
  `claims across real PID namespaces (unshare${canUnshare ? '' : ` unavailable: ${unshare.stderr}`})`,
  () => {
    it('a process in another PID namespace does not take over the claim of this live process', async () => {
      const dir = tempDir();
      const mine = claimHostMachineId(BITS, { dir, releaseOnExit: false });
      expect(mine.machineId).toBe(0);
      const theirs = await holderInNamespace(dir);
      expect(theirs.pid).toBe(1); // pid 1 of its own namespace: it really is in another one
      expect(theirs.machineId).toBe(1);
      mine.release();
    }, 30_000);

    it('this process does not take over the claim of a live process in another PID namespace', async () => {
      const dir = tempDir();
      const theirs = await holderInNamespace(dir);
      expect(theirs.machineId).toBe(0);
      // Its pid (1 there) names another process here: judged by pid, the claim would look abandoned.
      expect(systemProcesses.startOf(1)).not.toBe(readRecordAt(dir, '0.claim').start);
      const mine = claimHostMachineId(BITS, { dir, releaseOnExit: false });
      expect(mine.machineId).toBe(1);
      expect(readRecordAt(dir, '0.claim').pid).toBe(1);
      mine.release();
    }, 30_000);
  },
);
