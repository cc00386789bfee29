// The built `ids` executable, run as a user runs it: a separate process, real streams, real
// exit codes.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPARE_DEFAULT } from './expected.js';
import { CLAIM_DIR, ERROR_LINE, jsonOf } from './helpers.js';

const bin = join(__dirname, '..', 'bin', 'ids.js');
// The user's own machine-ID settings (IDS_*, a Kubernetes pod's variables) must not steer these runs.
const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith('IDS_') && name !== 'KUBERNETES_SERVICE_HOST',
  ),
);
const baseEnv = { ...userEnv, IDS_CLAIM_DIR: CLAIM_DIR };

function ids(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: { ...baseEnv, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function shell(command: string) {
  return spawnSync('bash', ['-o', 'pipefail', '-c', command], {
    env: baseEnv,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

describe('the ids executable', () => {
  it('starts with a node shebang, so npm can link it as a bin', () => {
    expect(readFileSync(bin, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('ids compare prints the side-by-side table: Sonyflake 174 years to 2188-11-16T03:28:58.880Z, Twitter 69', () => {
    const result = ids(['compare']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${COMPARE_DEFAULT}\n`);
  });

  it('ids compare --json is machine-readable', () => {
    const result = ids(['compare', '--json', '--layout', 'snowflake:node=8,step=14']);
    const table = jsonOf(result);
    expect(table).toHaveLength(5);
    expect(table[0]).toMatchObject({ name: 'sonyflake', endsAt: '2188-11-16T03:28:58.880Z' });
    expect(table[4]).toMatchObject({
      name: 'snowflake:node=8,step=14',
      timeBits: 41,
      idsPerSecond: 16_384_000,
    });
  });

  it('exit 2 for a usage error: one stderr line with the code, no stack', () => {
    for (const args of [['frob'], ['generate', '--count', 'many'], ['decompose', 'not-an-id']]) {
      const result = ids(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(ERROR_LINE);
      expect(result.stderr).not.toMatch(/\s+at /);
      expect(result.stdout).toBe('');
    }
  });

  it('exit 1 for a failure while running: no machine ID can be had', () => {
    // No explicit ID, no private IPv4 here, and a claim directory that cannot exist.
    const result = ids(['generate'], { IDS_CLAIM_DIR: '/proc/self/ids-claims' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(/^ids generate: error ERR_IDS_AUTO_MACHINE_ID: no machine ID: /);
    expect(result.stderr).toMatch(
      /Give one with --machine-id N or IDS_MACHINE_ID=N \(0 to 65535 for this layout\)/,
    );
  });

  it('generate, then decompose --json, through IDS_MACHINE_ID', () => {
    const generated = ids(['generate', '-n', '4', '-l', 'twitter', '-f', 'crockford32'], {
      IDS_MACHINE_ID: '1000',
    });
    expect(generated.code).toBe(0);
    const texts = generated.stdout.trim().split('\n');
    expect(texts).toHaveLength(4);
    const decomposed = ids(['decompose', '-l', 'twitter', '--json', ...texts]);
    expect(decomposed.code).toBe(0);
    const rows = JSON.parse(decomposed.stdout);
    expect(rows.map((r: { encoding: string }) => r.encoding)).toEqual(Array(4).fill('crockford32'));
    expect(rows.map((r: { parts: unknown }) => r.parts)).toEqual(
      Array(4).fill({ datacenter: 31, worker: 8 }),
    );
  });

  it('machine-id --explain and --json', () => {
    const explained = ids(['machine-id', '--explain', '-l', 'discord'], { IDS_MACHINE_ID: '12' });
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(
      /^machine ID 12 for the discord layout \(10 machine bits\), from explicit ID\n/,
    );
    expect(explained.stdout).toMatch(
      /1\. --machine-id: skipped - not given\n.*2\. explicit ID: used - machine ID 12 from IDS_MACHINE_ID\n$/s,
    );
    const json = JSON.parse(ids(['machine-id', '--json', '-m', '3']).stdout);
    expect(json).toMatchObject({ machineId: 3, step: '--machine-id', bits: 16 });
  });

  it("the README's `ids generate -n 1e9 | head` exits 0, the pipe's reader having taken its lines", () => {
    const result = shell(`'${process.execPath}' '${bin}' generate -n 1e9 -m 1 | head`);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(10);
  });

  it('a reader that closes the pipe early ends the run quietly with exit 0', () => {
    const result = shell(`'${process.execPath}' '${bin}' generate -n 50000000 -l twitter -m 1 | head -n 2`);
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(2);
    // Only the up-front note of how long the whole count would take; no error.
    expect(result.stderr).toBe(
      "ids generate: note: 50,000,000 IDs take at least 12s at the twitter layout's ceiling of 4,096,000 IDs/s per machine ID\n",
    );
  });

  it.skipIf(!hasScript)('on a terminal, a large run draws a progress bar on stderr and erases it', () => {
    // script(1) gives the command a pseudo-terminal; stdout goes to /dev/null, so what the
    // terminal shows is stderr alone.
    const command = `'${process.execPath}' '${bin}' generate -n 200000 -l twitter -m 1 > /dev/null`;
    const result = spawnSync('script', ['-qfec', command, '/dev/null'], {
      env: baseEnv,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/\[[#.]{30}\]\s+\d+% [\d,]+ \/ 200,000 IDs/);
    expect(result.stdout).toContain('100% 200,000 / 200,000 IDs');
    expect(result.stdout).toContain('\r\x1b[K');
  });
});
