import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import {
  ClaimDirUnsafeError,
  HeldFileCorruptError,
  HostClaim,
  KeptFileUnreadableError,
  keptMachineId,
  MAX_FILE_BYTES,
} from '../src/index.js';
import {
  BITS,
  claimIn,
  fakeTable,
  listDir,
  readRecordAt,
  record,
  runAuto,
  T0,
  tempDir,
  thrown,
  writeRecord,
} from './helpers.js';

const DIST = pathToFileURL(join(__dirname, '..', 'dist', 'index.js')).href;

function mkfifo(path: string): void {
  const made = spawnSync('mkfifo', [path]);
  expect(made.status).toBe(0);
}

/**
 * Runs `body` (an async function body receiving the built package as `m` and the directory as
 * `dir`) in a child process, killed after 20 s: a read that blocks on a FIFO, or reads /dev/zero
 * until memory runs out, shows as a kill here instead of a stuck test runner.
 */
function inChild(dir: string, body: string) {
  const code = `
    const m = await import(${JSON.stringify(DIST)});
    const dir = ${JSON.stringify(dir)};
    const table = { pid: 100, exists: (p) => p === 100, startOf: () => '1000', bootId: () => 'boot-1', hostname: () => 'test-host' };
    const errors = [];
    const result = await (async () => { ${body} })();
    console.log(JSON.stringify({ result, errors }));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=256' },
  });
  expect(run.signal, `the child was killed (hung or out of memory): ${run.stderr}`).toBeNull();
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as { result: unknown; errors: string[] };
}

const CLAIM_BOTH = `
  const opts = { dir, processes: table, releaseOnExit: false, onError: (e) => errors.push(e.code + ' ' + e.message) };
  const ranged = m.claimHostMachineId(16, opts).machineId;
  let exact;
  try { m.claimHostMachineId(16, { ...opts, min: 0, max: 0 }); exact = 'taken'; }
  catch (e) { exact = e.code + ' ' + e.message; }
  return { ranged, exact };`;

describe('hostile files in the claim directory', () => {
  it('a FIFO at <id>.claim is skipped in a range and a typed error for that ID: no read blocks', () => {
    const dir = tempDir();
    mkfifo(join(dir, '0.claim'));
    const { result, errors } = inChild(dir, CLAIM_BOTH);
    expect(result).toEqual({
      ranged: 1,
      exact: expect.stringMatching(
        /^ERR_IDS_HELD_FILE_CORRUPT .*0\.claim is not a claim file: .*a FIFO; expected a regular file/,
      ),
    });
    expect(errors[0]).toMatch(/^ERR_IDS_HELD_FILE_CORRUPT .*a FIFO/);
  });

  it('a link to /dev/zero at <id>.claim is not followed: skipped, never read until memory runs out', () => {
    const dir = tempDir();
    symlinkSync('/dev/zero', join(dir, '0.claim'));
    const { result } = inChild(dir, CLAIM_BOTH);
    expect(result).toEqual({
      ranged: 1,
      exact: expect.stringMatching(/^ERR_IDS_HELD_FILE_CORRUPT .*a symbolic link, which is not followed/),
    });
  });

  it("a FIFO at a takeover token's name skips that ID (and the token sweep reports it), without blocking", () => {
    const dir = tempDir();
    const abandoned = record({ pid: 999, nonce: 'ab'.repeat(12) });
    writeRecord(dir, '0.claim', abandoned);
    mkfifo(join(dir, `0.claim~${abandoned.nonce}`));
    const { result, errors } = inChild(dir, CLAIM_BOTH);
    expect(result).toMatchObject({
      ranged: 1,
      exact: expect.stringMatching(/^ERR_IDS_HELD_FILE_CORRUPT .*a FIFO/),
    });
    expect(errors.some((e) => /0\.claim~abab.* a FIFO/.test(e))).toBe(true);
    expect(readRecordAt(dir, '0.claim').pid).toBe(999); // never taken over
  });

  it('a FIFO or a /dev/zero link at the kept-ID path is KeptFileUnreadableError at once', () => {
    const dir = tempDir();
    mkfifo(join(dir, 'fifo-id'));
    symlinkSync('/dev/zero', join(dir, 'zero-id'));
    const { result } = inChild(
      dir,
      `return ['fifo-id', 'zero-id'].map((name) => {
        try { return m.keptMachineId({ path: dir + '/' + name, fallback: () => 1 })({ bits: 16 }); }
        catch (e) { return e.code + ' ' + e.message; }
      });`,
    );
    expect(result).toEqual([
      expect.stringMatching(/^ERR_IDS_KEPT_FILE_UNREADABLE .*fifo-id exists but cannot be read: .*a FIFO/),
      expect.stringMatching(
        /^ERR_IDS_KEPT_FILE_UNREADABLE .*zero-id exists but cannot be read: .*symbolic link/,
      ),
    ]);
  });

  it('reads are capped: a claim file over MAX_FILE_BYTES is refused, even if it parses', () => {
    const dir = tempDir();
    const padded = `${JSON.stringify(record({ state: 'released' }))}${' '.repeat(MAX_FILE_BYTES)}`;
    writeFileSync(join(dir, '0.claim'), padded);
    expect(claimIn(dir, { onError: () => undefined }).machineId).toBe(1);
    const error = thrown(() => claimIn(dir, { min: 0, max: 0 }));
    expect(error).toBeInstanceOf(HeldFileCorruptError);
    expect(error.message).toMatch(`more than ${MAX_FILE_BYTES} bytes`);
    writeFileSync(join(dir, 'kept'), `7${' '.repeat(MAX_FILE_BYTES)}`);
    expect(() => keptMachineId({ path: join(dir, 'kept'), fallback: () => 1 })({ bits: BITS })).toThrow(
      KeptFileUnreadableError,
    );
  });

  it('a directory at <id>.claim skips that ID instead of failing the whole range', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '0.claim'));
    const onError = vi.fn();
    expect(claimIn(dir, { onError }).machineId).toBe(1);
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(HeldFileCorruptError);
    expect(() => claimIn(dir, { min: 0, max: 0 })).toThrow(/0\.claim is not a claim file: .*a directory/);
  });
});

describe('recorded times out of range', () => {
  it.each([1e300, -1e300, 8.64e15 + 1])(
    'recordedMs %d is refused as corrupt, naming the file',
    (recordedMs) => {
      const dir = tempDir();
      writeRecord(dir, '0.claim', record({ state: 'released', recordedMs }));
      const error = thrown(() => claimIn(dir, { min: 0, max: 0 }));
      expect(error).toBeInstanceOf(HeldFileCorruptError);
      expect(error.message).toMatch(
        `${join(dir, '0.claim')} is not a claim file: expected "recordedMs" Unix milliseconds within`,
      );
      // A range passes over it, so the host is not poisoned: the auto chain lands on ID 1.
      const auto = runAuto({
        env: {},
        interfaces: () => ({}),
        claim: { dir, processes: fakeTable(100), releaseOnExit: false, onError: () => undefined },
      });
      expect(auto.id).toBe(1);
    },
  );

  it('a claim is released when something after taking it throws, so the next run can take it', () => {
    const dir = tempDir();
    const spy = vi.spyOn(HostClaim.prototype, 'describe').mockImplementation(() => {
      throw new RangeError('Invalid time value');
    });
    const options = {
      env: {},
      interfaces: () => ({}),
      claim: { dir, processes: fakeTable(100), releaseOnExit: false },
    };
    try {
      expect(() => runAuto(options)).toThrow(/Invalid time value/);
    } finally {
      spy.mockRestore();
    }
    expect(readRecordAt(dir, '0.claim').state).toBe('released');
    expect(
      runAuto({ ...options, claim: { ...options.claim, processes: fakeTable(101, { 100: '1000' }) } }).id,
    ).toBe(0);
  });
});

describe('a forward clock jump', () => {
  it('a record far ahead of the clock is passed over while another ID is free, and honoured when none is', () => {
    const dir = tempDir();
    const jumped = T0 + 3_600_000; // a holder ran with the clock an hour ahead, then released
    writeRecord(dir, '0.claim', record({ state: 'released', recordedMs: jumped }));
    const first = claimIn(dir);
    expect(first.machineId).toBe(1);
    expect(first.notBefore).toBeUndefined();
    // With every other ID held, the passed-over one is taken, its record honoured.
    const second = claimIn(dir, { min: 0, max: 1, processes: fakeTable(101, { 100: '1000' }) });
    expect(second.machineId).toBe(0);
    expect(second.notBefore).toBe(jumped);
  });

  it('a record ahead by no more than recordAheadMs (a holder killed a moment ago) is still taken', () => {
    const dir = tempDir();
    writeRecord(dir, '0.claim', record({ pid: 999, recordedMs: T0 + 900 }));
    expect(claimIn(dir).machineId).toBe(0);
  });
});

describe('who may write the claim directory', () => {
  it('a world-writable directory is refused with ClaimDirUnsafeError unless allowSharedDir accepts it', () => {
    const dir = tempDir();
    chmodSync(dir, 0o1777);
    const error = thrown(() => claimIn(dir));
    expect(error).toBeInstanceOf(ClaimDirUnsafeError);
    expect(error.message).toMatch(/is writable by every user \(mode 1777\).*allowSharedDir: true/);
    expect(listDir(dir)).toEqual([]);
    expect(claimIn(dir, { allowSharedDir: true }).machineId).toBe(0);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'a directory owned by another user is refused too (chown needs root)',
    () => {
      const dir = tempDir();
      chownSync(dir, 65534, 65534);
      expect(() => claimIn(dir)).toThrow(/is owned by uid 65534, not this process's uid 0/);
      expect(claimIn(dir, { allowSharedDir: true }).machineId).toBe(0);
    },
  );
});
