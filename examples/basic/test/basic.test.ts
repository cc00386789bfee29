import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPrivateIPv4 } from '@ids/machine-ip';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../index.mjs';

const script = join(__dirname, '..', 'index.mjs');
const NO_PRIVATE = () => ({ eth0: [{ address: '192.0.2.10', family: 'IPv4', internal: false }] });
const claimDirs: string[] = [];
/** A fresh claim directory, deleted after this file's tests. */
const claimDir = () => {
  claimDirs.push(mkdtempSync(join(tmpdir(), 'ids-basic-')));
  return claimDirs.at(-1)!;
};
afterAll(() => {
  for (const dir of claimDirs) rmSync(dir, { recursive: true, force: true });
});

function start(env: Record<string, string>) {
  const { IDS_MACHINE_ID: _, IDS_CLAIM_DIR: __, ...rest } = process.env;
  return spawnSync(process.execPath, [script], { env: { ...rest, ...env }, encoding: 'utf8' });
}

function rows(stdout: string): string[] {
  return stdout.split('\n').filter((line) => /^\d{15,}\s/.test(line));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('examples/basic (the main job of npm start)', { timeout: 60_000 }, () => {
  it('with IDS_MACHINE_ID, says the explicit step gave it and prints decomposed IDs', () => {
    const run = start({ IDS_MACHINE_ID: '321', IDS_CLAIM_DIR: claimDir() });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^machine ID 321, from the explicit step:\n {2}1\. explicit ID: used - machine ID 321 from IDS_MACHINE_ID\n/,
    );
    expect(rows(run.stdout)).toHaveLength(5);
    for (const row of rows(run.stdout)) expect(row).toMatch(/^\d+\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+\d+\s+321$/);
  });

  it("on this host, lands on the step the host's addresses call for and says why", () => {
    const dir = claimDir();
    const run = start({ IDS_CLAIM_DIR: dir });
    expect(run.status, run.stderr).toBe(0);
    const hasPrivate = Object.values(networkInterfaces())
      .flat()
      .some((a) => a !== undefined && !a.internal && isPrivateIPv4(a.address));
    if (hasPrivate) {
      expect(run.stdout).toMatch(/from the private-ip step/);
    } else {
      // These machines: no private IPv4, so a host claim in IDS_CLAIM_DIR.
      expect(run.stdout).toMatch(/^machine ID 0, from the host-claim step:/);
      expect(run.stdout).toMatch(/4\. private IPv4: failed - no private ip address/);
      expect(run.stdout).toContain(
        `6. host claim: used - machine ID 0, unique among the processes of this host using ${dir}`,
      );
      expect(JSON.parse(readFileSync(join(dir, '0.claim'), 'utf8'))).toMatchObject({ state: 'released' });
    }
    expect(rows(run.stdout)).toHaveLength(5);
  });

  it('without a private IPv4, claims on the host, releases on close, and the next run takes the same ID after it', async () => {
    const dir = claimDir();
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const first = await main({ env: { IDS_CLAIM_DIR: dir }, interfaces: NO_PRIVATE });
    expect(first.auto.step).toBe('host-claim');
    expect(first.auto.trail.map((s) => s.outcome)).toEqual([
      'skipped',
      'skipped',
      'skipped',
      'failed',
      'skipped',
      'used',
    ]);
    const released = JSON.parse(readFileSync(join(dir, '0.claim'), 'utf8'));
    expect(released).toMatchObject({ state: 'released', pid: process.pid });
    const second = await main({ env: { IDS_CLAIM_DIR: dir }, interfaces: NO_PRIVATE });
    expect(second.auto.id).toBe(0);
    expect(second.auto.explain()).toMatch(/released by pid \d+; IDs start after/);
    expect(second.ids[0]).toBeGreaterThan(first.ids.at(-1)!);
    expect(log.mock.calls.map((c) => c[0]).join('\n')).toMatch(/machine ID 0, from the host-claim step/);
  });

  it('a bad IDS_MACHINE_ID stops with the reason instead of being skipped', () => {
    const run = start({ IDS_MACHINE_ID: '70000', IDS_CLAIM_DIR: claimDir() });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /AutoMachineIdError: no machine ID: IDS_MACHINE_ID: expected an integer from 0 to 65535, received "70000"/,
    );
    expect(run.stdout).toBe('');
  });
});
