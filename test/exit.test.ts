import { join } from 'node:path';
import { claimHostMachineId } from '@ids/machine-file';
import { describe, expect, it } from 'vitest';
import { listDir, readJson, run, tempDir } from './helpers.js';

// A process that never closes its generator: how it ends decides whether its claim is released
// or left to be taken over. Either way no claim file stays held by a process that is gone.

describe('claims at process exit', () => {
  for (const how of ['natural', 'exit', 'throw']) {
    it(`a process that ends by ${how} releases its claim, recording past its last ID`, async () => {
      const dir = tempDir('exit');
      const child = run('exit-claim.mjs', { CLAIM_DIR: dir, EXIT: how });
      const result = await child;
      expect(result.code).toBe(how === 'throw' ? 1 : 0);
      const [, id, lastMs] = /^claimed (\d+) (\d+)/.exec(result.stdout)!;
      const claim = readJson(join(dir, `${id}.claim`));
      expect(claim).toMatchObject({ state: 'released', pid: child.pid });
      expect(claim.recordedMs as number).toBeGreaterThan(Number(lastMs));
      expect(listDir(dir)).toEqual([`${id}.claim`]);
    });
  }

  it('a process killed with SIGKILL leaves its claim held; the next claimer takes it over', async () => {
    const dir = tempDir('exit');
    const holder = run('exit-claim.mjs', { CLAIM_DIR: dir, EXIT: 'hang' });
    await new Promise<void>((resolve) => holder.child.stdout!.once('data', () => resolve()));
    expect(readJson(join(dir, '0.claim'))).toMatchObject({ state: 'held', pid: holder.pid });
    holder.child.kill('SIGKILL');
    await holder;
    const next = claimHostMachineId(16, { dir, releaseOnExit: false });
    expect(next.machineId).toBe(0);
    expect(next.tookOver).toMatchObject({ state: 'abandoned', pid: holder.pid });
    expect(next.describe()).toMatch(`pid ${holder.pid} is not running`);
    next.release();
  });
});
