// Renewals run on a thread of their own (src/renewal.ts): a holder whose main thread is blocked
// keeps its lock file and host claim, one that is stopped (SIGSTOP stops every thread) loses
// them, and one killed with -9 frees them at once. Real child processes on the system clock, with
// short records (recordAheadMs 200, renewed every 50 ms), against the 10 s FOREIGN_CLAIM_GRACE_MS.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { claimHostMachineId, FOREIGN_CLAIM_GRACE_MS, HeldFileLostError, lockFile } from '../src/index.js';
import { record, tempDir, writeRecord } from './helpers.js';

const DIST = pathToFileURL(join(__dirname, '..', 'dist', 'index.js')).href;
const AHEAD = 200;
/** Past this long without a renewal, a renewal counts as late: the holder must give its file up. */
const LATE_MS = AHEAD + FOREIGN_CLAIM_GRACE_MS;

// Takes a lock file and a host claim in the directory argv[1], reports each loss, then does what
// argv[2] says: `block` its main thread synchronously past LATE_MS (until the files show renewals
// made after that point, which only another thread can make meanwhile), or `idle`.
const HOLDER = `
  import { readFileSync } from 'node:fs';
  import { join } from 'node:path';
  const m = await import(${JSON.stringify(DIST)});
  const [dir, mode] = process.argv.slice(1);
  const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  const options = { recordAheadMs: ${AHEAD}, releaseOnExit: false };
  const lock = m.lockFile(join(dir, 'ids.lock'), { ...options, what: 'the test directory', renewIntervalMs: 50 });
  const claim = m.claimHostMachineId(8, { ...options, dir, recordIntervalMs: 50 });
  for (const [name, held] of [['lock', lock], ['claim', claim]]) {
    held.signal.addEventListener('abort', () => {
      const { name: error, code, message } = held.signal.reason;
      say({ lost: name, error, code, message });
    });
  }
  say({ ready: true, lock: lock.path, claim: claim.path, machineId: claim.machineId });
  const recorded = (path) => JSON.parse(readFileSync(path, 'utf8')).recordedMs;
  if (mode === 'block') {
    const start = Date.now();
    const past = start + ${LATE_MS} + 500;
    const renewedPast = () => recorded(lock.path) > past && recorded(claim.path) > past;
    const cell = new Int32Array(new SharedArrayBuffer(4));
    // Bounded, for the case this test is for: with renewals on this thread, nothing renews meanwhile.
    while (Date.now() < start + 60_000 && !(Date.now() > past && renewedPast())) Atomics.wait(cell, 0, 0, 20);
    const now = Date.now();
    const blockedMs = now - start;
    const ahead = { lock: recorded(lock.path) - now, claim: recorded(claim.path) - now };
    let verified = 'ok';
    try {
      lock.verify();
      claim.verify();
    } catch (error) {
      verified = error.name + ': ' + error.message;
    }
    const aborted = { lock: lock.signal.aborted, claim: claim.signal.aborted };
    lock.release();
    claim.release();
    const state = { lock: JSON.parse(readFileSync(lock.path, 'utf8')).state, claim: JSON.parse(readFileSync(claim.path, 'utf8')).state };
    say({ blockedMs, ahead, verified, aborted, state });
  } else {
    setInterval(() => {}, 1000);
  }`;

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

type Line = Record<string, unknown>;

/**
 * Starts a holder in a fresh directory and resolves once it holds both files, with the line that
 * says so (`ready`); `next(test)` resolves with the first line it prints that passes `test`.
 */
async function holder(mode: 'block' | 'idle') {
  const dir = tempDir();
  const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, dir, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: Line[] = [];
  const waiting = new Set<() => void>();
  let err = '';
  let out = '';
  child.stdout!.on('data', (chunk) => {
    out += chunk;
    for (let end = out.indexOf('\n'); end >= 0; end = out.indexOf('\n')) {
      lines.push(JSON.parse(out.slice(0, end)));
      out = out.slice(end + 1);
    }
    for (const wake of waiting) wake();
  });
  child.stderr!.on('data', (chunk) => {
    err += chunk;
  });
  // 'close', not 'exit': a line printed just before exiting may still be in the pipe at 'exit'.
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const next = (test: (line: Line) => boolean): Promise<Line> =>
    new Promise((resolve, reject) => {
      const look = () => {
        const found = lines.find(test);
        if (found) {
          waiting.delete(look);
          resolve(found);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiting.delete(look);
          reject(new Error(`the holder exited (${child.exitCode ?? child.signalCode}) first: ${err}`));
        }
      };
      waiting.add(look);
      child.on('close', look);
      look();
    });
  const ready = await next((line) => line.ready === true);
  return { dir, child, pid: child.pid as number, next, exited, ready };
}

const recordedMs = (path: string): number => JSON.parse(readFileSync(path, 'utf8')).recordedMs;

/** Resolves once /proc says the process is stopped (state T): its files no longer change. */
async function stopped(pid: number): Promise<void> {
  const state = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
  while (state() !== 'T') await new Promise((resolve) => setTimeout(resolve, 10));
}

describe.concurrent('renewals on their own thread, in real processes', () => {
  it('a main thread blocked past recordAheadMs + the grace keeps its lock file and host claim, renewed meanwhile', async () => {
    const h = await holder('block');
    const result = await h.next((line) => 'blockedMs' in line);
    expect(result.verified).toBe('ok');
    expect(result.aborted).toEqual({ lock: false, claim: false });
    expect(result.blockedMs).toBeGreaterThan(LATE_MS);
    // Renewed while the main thread was blocked: the records are still ahead of the clock.
    const ahead = result.ahead as { lock: number; claim: number };
    expect(ahead.lock).toBeGreaterThan(-FOREIGN_CLAIM_GRACE_MS);
    expect(ahead.claim).toBeGreaterThan(-FOREIGN_CLAIM_GRACE_MS);
    expect(result.state).toEqual({ lock: 'released', claim: 'released' });
  }, 120_000);

  it('a holder stopped (SIGSTOP) past recordAheadMs + the grace loses both when it resumes', async () => {
    const h = await holder('idle');
    h.child.kill('SIGSTOP');
    await stopped(h.pid);
    // Its records lapse, and stay lapsed for longer than the grace: a process of another PID
    // namespace would count it as gone by then.
    const lapsed = Math.max(recordedMs(h.ready.lock as string), recordedMs(h.ready.claim as string));
    while (Date.now() <= lapsed + FOREIGN_CLAIM_GRACE_MS + 500) {
      await new Promise((resolve) => setTimeout(resolve, lapsed + FOREIGN_CLAIM_GRACE_MS + 501 - Date.now()));
    }
    h.child.kill('SIGCONT');
    const late =
      /was lost: its record was renewed \d+ ms after it lapsed \(more than 10000 ms: the process was stopped or starved\)/;
    const lock = await h.next((line) => line.lost === 'lock');
    expect(lock).toMatchObject({ error: 'HeldFileLostError', code: 'ERR_IDS_HELD_FILE_LOST' });
    expect(lock.message).toMatch(late);
    expect(lock.message).toMatch(/^the test directory: its lock .*ids\.lock was lost/);
    const claim = await h.next((line) => line.lost === 'claim');
    expect(claim).toMatchObject({ error: 'HeldFileLostError', code: 'ERR_IDS_HELD_FILE_LOST' });
    expect(claim.message).toMatch(late);
  }, 120_000);

  it('kill -9 of the holder frees its lock file and its claim for the next process at once', async () => {
    const { dir, child, pid, exited, ready } = await holder('idle');
    child.kill('SIGKILL');
    await exited;
    const lock = lockFile(ready.lock as string, { releaseOnExit: false });
    expect(lock.tookOver).toEqual({ state: 'abandoned', pid });
    const id = ready.machineId as number;
    const claim = claimHostMachineId(8, { dir, min: id, max: id, releaseOnExit: false });
    expect(claim.tookOver).toMatchObject({ state: 'abandoned', pid });
    lock.release();
    claim.release();
    // The temporary file of a renewal the kill cut short, if any, is swept by the takeovers.
    expect(readdirSync(dir).sort()).toEqual([`${id}.claim`, 'ids.lock']);
  }, 120_000);
});

describe('a loss the renewal thread finds', () => {
  it('is seen by verify() on a main thread blocked since, long before the record lapses, with the reason the thread gave', () => {
    const dir = tempDir();
    // Records 10 minutes ahead: verify() has no reason to renew (and so look at the file) itself.
    const recordAheadMs = 600_000;
    const lock = lockFile(join(dir, 'ids.lock'), {
      what: 'the test directory',
      renewIntervalMs: 10,
      recordAheadMs,
      releaseOnExit: false,
    });
    const claim = claimHostMachineId(8, { dir, recordIntervalMs: 10, recordAheadMs, releaseOnExit: false });
    // Another process's holdings replace both files, whole (renamed into place, as a takeover
    // does: a renewal reading a half-written file would find it corrupt, and lost for that reason).
    const replace = (name: string, pid: number) => {
      writeRecord(dir, 'replacement', record({ pid }));
      renameSync(join(dir, 'replacement'), join(dir, name));
    };
    replace('ids.lock', 555);
    replace(`${claim.machineId}.claim`, 556);
    // Blocked from here on: only the renewal thread can find the files replaced, and only shared
    // memory and a synchronous read of its messages can tell this thread.
    const cell = new Int32Array(new SharedArrayBuffer(4));
    let lockError: unknown;
    for (const start = Date.now(); Date.now() - start < 60_000; Atomics.wait(cell, 0, 0, 10)) {
      try {
        lock.verify();
      } catch (error) {
        lockError = error;
      }
      claim.verify();
      if (lockError !== undefined && claim.signal.aborted) break;
    }
    expect(lockError).toBeInstanceOf(HeldFileLostError);
    expect((lockError as Error).message).toMatch(
      /^the test directory: its lock .*ids\.lock was lost: the file now holds pid 555's held record$/,
    );
    expect(claim.signal.reason).toBeInstanceOf(HeldFileLostError);
    expect(claim.signal.reason.message).toMatch(/was lost: the file now holds pid 556's held claim/);
    // Neither release writes over the new holders.
    lock.release();
    claim.release();
    expect(JSON.parse(readFileSync(join(dir, 'ids.lock'), 'utf8')).pid).toBe(555);
    expect(JSON.parse(readFileSync(join(dir, `${claim.machineId}.claim`), 'utf8')).pid).toBe(556);
  }, 120_000);
});

describe('renewalThread: false', () => {
  // A short-lived process that only issues IDs (the `ids` command) renews from its own thread:
  // while that thread is blocked nothing renews, where the renewal thread would have.
  const blockedRenewals = (renewalThread?: boolean) => {
    const dir = tempDir();
    const claim = claimHostMachineId(8, {
      dir,
      recordIntervalMs: 20,
      recordAheadMs: 40,
      releaseOnExit: false,
      ...(renewalThread === undefined ? {} : { renewalThread }),
    });
    const recorded = () => JSON.parse(readFileSync(claim.path, 'utf8')).recordedMs as number;
    const before = recorded();
    const cell = new Int32Array(new SharedArrayBuffer(4));
    Atomics.wait(cell, 0, 0, 400);
    const after = recorded();
    claim.release();
    return after - before;
  };

  it('renews only from the holder thread: a blocked one renews nothing meanwhile, unlike the thread', () => {
    expect(blockedRenewals(false)).toBe(0);
    expect(blockedRenewals()).toBeGreaterThan(200);
  });

  it('is a boolean', () => {
    expect(() => claimHostMachineId(8, { dir: tempDir(), renewalThread: 'no' as never })).toThrow(
      /renewalThread: expected true or false, received "no" \(string\)/,
    );
  });
});
