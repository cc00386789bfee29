import { homedir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError, InvalidMachineIdError } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { AutoMachineIdError, defaultClaimDir, HeldFileInUseError, HostClaim } from '../src/index.js';
import {
  type AutoRun,
  fakeTable,
  listDir,
  readRecordAt,
  runAuto,
  TRAIL_TO_HOST_CLAIM,
  tempDir,
  thrown,
} from './helpers.js';

// Interface lists as os.networkInterfaces() gives them: these machines have only a
// documentation-range address, so the real one cannot show the private-IPv4 step working.
const NO_PRIVATE = () => ({
  lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }],
  eth0: [{ address: '192.0.2.10', family: 'IPv4', internal: false }],
});
const PRIVATE = () => ({ eth0: [{ address: '192.168.3.7', family: 'IPv4', internal: false }] });

function auto(dir: string, extra: AutoRun = {}) {
  return runAuto({
    env: {},
    interfaces: NO_PRIVATE,
    ...extra,
    claim: { dir, processes: fakeTable(100), releaseOnExit: false, ...extra.claim },
  });
}

describe('autoMachineId', () => {
  it('refuses a bit width outside 0..30 before any step runs', () => {
    for (const bits of [-1, 31, 2.5, Number.NaN]) {
      expect(() => auto(tempDir(), { bits, machineId: 1 })).toThrow(InvalidArgumentError);
    }
    expect(() => auto(tempDir(), { bits: 31 })).toThrow(
      /bits: expected an integer from 0 to 30, received 31/,
    );
  });

  it('an explicit option wins, and nothing touches the claim directory', () => {
    const dir = join(tempDir(), 'claims');
    const result = auto(dir, { machineId: 42 });
    expect(result.machineId).toBe(42);
    expect(result.step).toBe('explicit');
    expect(result.explain()).toBe('1. explicit ID: used - machine ID 42 from the machineId option');
    expect(() => listDir(dir)).toThrow(/ENOENT/);
  });

  it('then IDS_MACHINE_ID; a bad one is an error, never skipped over', () => {
    const dir = tempDir();
    expect(auto(dir, { env: { IDS_MACHINE_ID: '321' } }).id).toBe(321);
    for (const bad of ['70000', '1e3', '-1', '0x10', ' 7 x']) {
      const error = thrown<AutoMachineIdError>(() => auto(dir, { env: { IDS_MACHINE_ID: bad } }));
      expect(error).toBeInstanceOf(AutoMachineIdError);
      expect(error.cause).toBeInstanceOf(InvalidMachineIdError);
      expect(error.message).toContain(
        `IDS_MACHINE_ID: expected an integer from 0 to 65535, received ${JSON.stringify(bad)}`,
      );
      expect(error.trail).toEqual([{ step: 'explicit', outcome: 'failed', detail: expect.any(String) }]);
    }
    expect(listDir(dir)).toEqual([]);
  });

  it('with no explicit ID and no private IPv4 (these machines), lands on a host claim and says why', () => {
    const dir = tempDir();
    const result = auto(dir);
    expect(result.step).toBe('host-claim');
    expect(result.machineId).toBeInstanceOf(HostClaim);
    expect(result.id).toBe(0);
    expect(result.trail.map((s) => [s.step, s.outcome])).toEqual(TRAIL_TO_HOST_CLAIM);
    const lines = result.explain().split('\n');
    expect(lines[0]).toBe('1. explicit ID: skipped - no machineId option, and IDS_MACHINE_ID is not set');
    expect(lines[1]).toBe(
      '2. Kubernetes ordinal: skipped - not in Kubernetes: KUBERNETES_SERVICE_HOST is not set',
    );
    expect(lines[2]).toBe('3. EC2 metadata: skipped - opt-in, and IDS_AUTO_OPT_IN does not name ec2');
    expect(lines[3]).toMatch(/^4\. private IPv4: failed - no private ip address: .* found 192\.0\.2\.10/);
    expect(lines[4]).toBe(
      '5. unique-local IPv6: skipped - opt-in, and IDS_AUTO_OPT_IN does not name ipv6-ula',
    );
    expect(lines[5]).toBe(
      `6. host claim: used - machine ID 0, unique among the processes of this host using ${dir}: claimed ${join(dir, '0.claim')} (a machine ID not claimed here before)`,
    );
    // A second process of the host gets the next ID.
    expect(auto(dir, { claim: { processes: fakeTable(101, { 100: '1000' }) } }).id).toBe(1);
  });

  it('uses a private IPv4 by Go rule, held as a host claim of exactly that ID', () => {
    const dir = tempDir();
    const result = auto(dir, { interfaces: PRIVATE });
    expect(result.step).toBe('private-ip');
    expect(result.id).toBe(3 * 256 + 7);
    expect(result.machineId).toBeInstanceOf(HostClaim);
    expect(result.explain()).toMatch(
      /4\. private IPv4: used - machine ID 775 from 192\.168\.3\.7 .*on eth0: the only private IPv4 address; held on this host: claimed/,
    );
    expect(readRecordAt(dir, '775.claim')).toMatchObject({ state: 'held', pid: 100 });
  });

  it('a second process deriving the same private-IPv4 ID fails instead of sharing it (Go issues #12, #63)', () => {
    const dir = tempDir();
    auto(dir, { interfaces: PRIVATE });
    const error = thrown<AutoMachineIdError>(() =>
      auto(dir, { interfaces: PRIVATE, claim: { processes: fakeTable(101, { 100: '1000' }) } }),
    );
    expect(error).toBeInstanceOf(AutoMachineIdError);
    expect(error.cause).toBeInstanceOf(HeldFileInUseError);
    expect(error.message).toMatch(/machine ID 775 is not free .* held by pid 100, which is running/);
    expect(error.trail.at(-1)).toMatchObject({ step: 'private-ip', outcome: 'failed' });
    // Unguarded, it is a plain number and nothing is written.
    const unguarded = auto(tempDir(), { interfaces: PRIVATE, guardPrivateIp: false });
    expect(unguarded.machineId).toBe(775);
  });

  it('a private address whose ID does not fit the bits falls through to a host claim', () => {
    const dir = tempDir();
    const result = auto(dir, { interfaces: PRIVATE, bits: 8 });
    expect(result.step).toBe('host-claim');
    expect(result.trail.find((s) => s.step === 'private-ip')?.detail).toMatch(
      /machine ID 775, which needs 10 bits; the layout's machine field has 8/,
    );
  });

  it('an unusable claim directory stops the chain with the trail so far', () => {
    const error = thrown<AutoMachineIdError>(() => auto('/proc/ids-cannot-be-here'));
    expect(error).toBeInstanceOf(AutoMachineIdError);
    expect(error.message).toMatch(
      /no machine ID: the claim directory \/proc\/ids-cannot-be-here cannot be used/,
    );
    expect(error.trail.map((s) => s.outcome)).toEqual([
      'skipped',
      'skipped',
      'skipped',
      'failed',
      'skipped',
      'failed',
    ]);
  });

  it('reads IDS_CLAIM_DIR from its env when no dir option is given', () => {
    const dir = tempDir();
    const result = runAuto({
      env: { IDS_CLAIM_DIR: dir },
      interfaces: NO_PRIVATE,
      claim: { processes: fakeTable(100), releaseOnExit: false },
    });
    expect((result.machineId as HostClaim).path).toBe(join(dir, '0.claim'));
  });
});

describe('defaultClaimDir', () => {
  it('IDS_CLAIM_DIR, else XDG_STATE_HOME/ids/claims, else ~/.local/state/ids/claims', () => {
    expect(defaultClaimDir({ IDS_CLAIM_DIR: '/srv/claims', XDG_STATE_HOME: '/state' })).toBe('/srv/claims');
    expect(defaultClaimDir({ XDG_STATE_HOME: '/state' })).toBe('/state/ids/claims');
    expect(defaultClaimDir({ XDG_STATE_HOME: 'relative' })).toBe(
      join(homedir(), '.local', 'state', 'ids', 'claims'),
    );
    expect(defaultClaimDir({})).toBe(join(homedir(), '.local', 'state', 'ids', 'claims'));
  });
});
