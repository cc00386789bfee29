// One `auto` chain everywhere: for one environment, the library's provider, `ids machine-id
// --explain` and `ids-server`'s start log show the same trail. The CLI and the server put their
// `--machine-id` flag first (a step of their own, passed to the chain); the library has no flag,
// so its trail is theirs without that first step. Each run gets a fresh claim directory at the
// same path, so a host claim's sentence does not depend on the run before it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type AutoMachineId, autoMachineId } from '@ids/machine-file';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const cli = join(__dirname, '..', 'bin', 'ids.js');
const server = join(dirname(createRequire(__filename).resolve('@ids/server/package.json')), 'dist', 'bin.js');

const claims = join(tempDir('trail'), 'claims');
// A Deployment's pod: the Kubernetes step says why it has no ordinal, and the chain goes on.
const env = {
  PATH: process.env.PATH ?? '',
  IDS_CLAIM_DIR: claims,
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  HOSTNAME: 'web-7c9d8f6b4-24657',
};

/** Runs `use` with an empty claim directory at the same path each time. */
async function fresh<T>(use: () => Promise<T> | T): Promise<T> {
  rmSync(claims, { recursive: true, force: true });
  mkdirSync(claims);
  return await use();
}

/** The trail's lines without their numbers: `title: outcome - detail`. */
const unnumbered = (lines: readonly string[]) => lines.map((line) => line.replace(/^\d+\. /, ''));

function library(): Promise<AutoMachineId> {
  return fresh(async () => {
    let chosen: AutoMachineId | undefined;
    const machineId = await autoMachineId({ env, onChosen: (auto) => (chosen = auto) })({ bits: 16 });
    if (typeof machineId !== 'number') await machineId.release();
    return chosen as AutoMachineId;
  });
}

function command(): Promise<string[]> {
  return fresh(() => {
    const run = spawnSync(process.execPath, [cli, 'machine-id', '--explain'], { env, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // The first line names the ID and the layout; the trail follows, indented by four.
    return run.stdout
      .split('\n')
      .filter((line) => line.startsWith('    '))
      .map((line) => line.slice(4));
  });
}

function serverLog(): Promise<string[]> {
  return fresh(async () => {
    const child: ChildProcess = spawn(process.execPath, [server, '--port', '0'], {
      env: { ...env, IDS_DRAIN_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.setEncoding('utf8');
    try {
      // The slot's line, then its trail indented by four; the listening line comes first.
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (chunk: string) => {
          out += chunk;
          if (/host claim: used - .*\n/.test(out) || /private IPv4: used - .*\n/.test(out)) resolve();
        });
        child.on('exit', (code) => reject(new Error(`ids-server exited with ${code}: ${out}`)));
      });
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    return out
      .split('\n')
      .filter((line) => /^ {4}\d+\. /.test(line))
      .map((line) => line.slice(4));
  });
}

describe('the same trail from the library, the CLI and the server', () => {
  it('for one environment, step by step', async () => {
    const auto = await library();
    const cliTrail = await command();
    const serverTrail = await serverLog();

    // The built-in steps in their order, up to the one used (private-ip on a host with a private
    // IPv4, else host-claim).
    const steps = ['explicit', 'kubernetes-ordinal', 'ec2', 'private-ip', 'ipv6-ula', 'host-claim'];
    expect(['private-ip', 'host-claim']).toContain(auto.step);
    expect(auto.trail.map((s) => s.step)).toEqual(steps.slice(0, steps.indexOf(auto.step) + 1));
    expect(auto.trail[1]).toMatchObject({ outcome: 'skipped', detail: expect.stringMatching(/24657/) });
    expect(cliTrail[0]).toBe('1. --machine-id: skipped - not given');
    // The server and the CLI: the same lines, numbers included.
    expect(serverTrail).toEqual(cliTrail);
    // The library: the same lines after the flag's.
    expect(unnumbered(cliTrail.slice(1))).toEqual(unnumbered(auto.explain().split('\n')));
  }, 60_000);
});
