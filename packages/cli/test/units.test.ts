import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { InvalidMachineIdError, MissingPackageError } from '@ids/engine';
import { AutoMachineIdError } from '@ids/machine-file';
import { describe, expect, it } from 'vitest';
import { TRAIL_TO_HOST_CLAIM } from '../../machine-file/test/helpers.js';
import { EXIT_FAILURE, EXIT_USAGE, exitCodeOf, UsageError } from '../src/errors.js';
import { chooseMachineId } from '../src/machine-id.js';
import { PROGRESS_MIN, progressBar } from '../src/progress.js';
import { COMPARE_DEFAULT } from './expected.js';
import { CLAIM_DIR, hostWith, NO_PRIVATE_ADDRESS, tempDir } from './helpers.js';

describe('chooseMachineId', () => {
  it('flag, then IDS_MACHINE_ID, then the private IPv4 address, with the trail of each step', async () => {
    const host = hostWith('192.168.3.4');
    expect(
      await chooseMachineId({ bits: 16, flag: '9', env: { IDS_MACHINE_ID: '8' }, interfaces: host }),
    ).toMatchObject({
      machineId: 9,
      id: 9,
      step: '--machine-id',
      trail: [{ step: '--machine-id', outcome: 'used', detail: 'machine ID 9 from --machine-id' }],
    });
    const fromIp = await chooseMachineId({ bits: 16, env: { IDS_CLAIM_DIR: CLAIM_DIR }, interfaces: host });
    expect(fromIp.id).toBe(3 * 256 + 4);
    expect(fromIp.trail.map((s) => [s.step, s.outcome])).toEqual([
      ['--machine-id', 'skipped'],
      ['explicit', 'skipped'],
      ['kubernetes-ordinal', 'skipped'],
      ['ec2', 'skipped'],
      ['private-ip', 'used'],
    ]);
    // The private-IPv4 ID is held as a host claim, so a second process of this host cannot use it too.
    expect(typeof fromIp.machineId).toBe('object');
    await expect(
      chooseMachineId({ bits: 16, env: { IDS_CLAIM_DIR: CLAIM_DIR }, interfaces: host }),
    ).rejects.toThrow(/private IPv4: failed - .*held/);
    if (typeof fromIp.machineId !== 'number') await fromIp.machineId.release();
  });

  it('falls back to a host claim when the host has no private IPv4', async () => {
    const choice = await chooseMachineId({
      bits: 10,
      env: { IDS_CLAIM_DIR: CLAIM_DIR },
      interfaces: NO_PRIVATE_ADDRESS,
    });
    expect(choice.step).toBe('host-claim');
    expect(choice.trail.map((s) => [s.step, s.outcome])).toEqual([
      ['--machine-id', 'skipped'],
      ...TRAIL_TO_HOST_CLAIM,
    ]);
    if (typeof choice.machineId !== 'number') await choice.machineId.release();
  });

  it('refuses a typed value that is not an integer that fits', async () => {
    for (const flag of ['1.5', '-1', '0x10', '65536', ' 1', '']) {
      await expect(
        chooseMachineId({ bits: 16, flag, env: {}, interfaces: NO_PRIVATE_ADDRESS }),
      ).rejects.toThrow(InvalidMachineIdError);
    }
  });

  it('fails with AutoMachineIdError carrying every step when none produced an ID', async () => {
    const blocked = join(tempDir('blocked'), 'file');
    writeFileSync(blocked, 'not a directory');
    const attempt = chooseMachineId({
      bits: 16,
      env: { IDS_CLAIM_DIR: join(blocked, 'x') },
      interfaces: NO_PRIVATE_ADDRESS,
    });
    await expect(attempt).rejects.toThrow(AutoMachineIdError);
    const error = (await attempt.catch((e) => e)) as AutoMachineIdError;
    expect(error.code).toBe('ERR_IDS_AUTO_MACHINE_ID');
    expect(error.trail.map((s) => s.step)).toEqual([
      '--machine-id',
      'explicit',
      'kubernetes-ordinal',
      'ec2',
      'private-ip',
      'ipv6-ula',
      'host-claim',
    ]);
    expect(error.trail.every((s) => s.outcome !== 'used')).toBe(true);
  });
});

describe('exit codes', () => {
  it('2 for what the user typed, 1 for anything that failed while running', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(EXIT_USAGE);
    expect(exitCodeOf(new InvalidMachineIdError('x'))).toBe(EXIT_USAGE);
    expect(exitCodeOf(new AutoMachineIdError('x', []))).toBe(EXIT_FAILURE);
    expect(exitCodeOf(new Error('bug'))).toBe(EXIT_FAILURE);
  });

  // ids-server exits 2 for the same (a store configured without its package: its configuration
  // cannot work), so both commands give one code per condition (the README's table).
  it('2 for an optional package that is not installed', () => {
    const missing = new MissingPackageError('install @ids/server to use `ids serve`', ['@ids/server']);
    expect(exitCodeOf(missing)).toBe(EXIT_USAGE);
  });
});

describe('progressBar', () => {
  function terminal() {
    const stream = Object.assign(
      new Writable({
        write(chunk, _encoding, callback) {
          writes.push(chunk.toString());
          callback();
        },
      }),
      { isTTY: true },
    );
    const writes: string[] = [];
    return { stream, writes };
  }

  it('redraws at most every interval, always draws the end, and erases itself', () => {
    const { stream, writes } = terminal();
    let t = 0;
    const bar = progressBar(PROGRESS_MIN * 2, stream, { now: () => t });
    bar.update(1000);
    t += 50;
    bar.update(2000); // within 100 ms of the last draw: skipped
    t += 60;
    bar.update(PROGRESS_MIN);
    bar.update(PROGRESS_MIN * 2); // the end is always drawn
    bar.finish();
    expect(writes).toHaveLength(4);
    expect(writes[1]).toContain(' 50% 50,000 / 100,000 IDs');
    // 50,000 IDs in 110 ms: the rate, and the time left at that rate.
    expect(writes[1]).toContain('IDs, 454,545/s, 0s left');
    expect(writes[2]).toMatch(/^\r\[#{30}\] 100% /);
    expect(writes[3]).toBe('\r\x1b[K');
  });

  it('draws nothing for a small run, a non-terminal, or when disabled', () => {
    const { stream, writes } = terminal();
    for (const bar of [
      progressBar(PROGRESS_MIN - 1, stream),
      progressBar(PROGRESS_MIN, stream, { enabled: false }),
      progressBar(PROGRESS_MIN, Object.assign(stream, { isTTY: false })),
    ]) {
      bar.update(PROGRESS_MIN);
      bar.finish();
    }
    expect(writes).toEqual([]);
  });
});

describe('README', () => {
  it('shows the real output of ids compare', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const block = /`ids compare` with no options:\n\n```\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(block).toBe(COMPARE_DEFAULT);
  });
});
