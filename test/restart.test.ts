import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { max, min, readIds, run, tempDir } from './helpers.js';

// A holder of machine ID 0 stops (closing cleanly, or killed with SIGKILL mid-run), and a new
// process claims ID 0 with its clock set back (an injected clock: wall clock minus OFFSET_MS).
// Sonyflake fills every 10 ms tick with 256 IDs at full speed, so a restart that reused the
// ticks of the last 300 ms would repeat IDs for certain; the recorded time must prevent it.

async function streamUntil(dir: string, out: string, written: number) {
  const holder = run('restart.mjs', { CLAIM_DIR: dir, OUT: out, MODE: 'stream' });
  await new Promise<void>((resolve, reject) => {
    holder.child.stdout!.on('data', () => {
      if (existsSync(out) && readFileSync(out).length >= written * 8) resolve();
    });
    holder.then(reject, reject);
  });
  holder.child.kill('SIGKILL');
  return holder;
}

describe('recorded time across restarts', () => {
  it('after a clean close, a restart with the clock 300 ms behind waits instead of reissuing', async () => {
    const dir = tempDir('restart');
    const before = join(dir, 'before.ids');
    const after = join(dir, 'after.ids');
    const first = await run('restart.mjs', { CLAIM_DIR: dir, OUT: before, COUNT: '20000' });
    expect(first.stdout).toMatch(/^claimed notBefore=none/);
    expect(first.code).toBe(0);
    const second = await run('restart.mjs', {
      CLAIM_DIR: dir,
      OUT: after,
      COUNT: '20000',
      OFFSET_MS: '-300',
    });
    expect(second.stdout).toMatch(/^claimed notBefore=\d+/);
    expect(second.code).toBe(0);
    const a = readIds(before);
    const b = readIds(after);
    expect(a).toHaveLength(20_000);
    expect(b).toHaveLength(20_000);
    expect(min(b)).toBeGreaterThan(max(a));
    expect(new Set([...a, ...b]).size).toBe(40_000);
  });

  it('after a SIGKILL mid-run, a restart with the clock 300 ms behind issues no ID the killed one did', async () => {
    const dir = tempDir('restart');
    const before = join(dir, 'before.ids');
    const after = join(dir, 'after.ids');
    const killed = await streamUntil(dir, before, 20_000);
    expect((await killed).signal).toBe('SIGKILL');
    // The killed holder's record reaches ahead of its clock; waiting that out may take longer
    // than the default 1 s bound when the clock is also 300 ms behind.
    const second = await run('restart.mjs', {
      CLAIM_DIR: dir,
      OUT: after,
      COUNT: '20000',
      OFFSET_MS: '-300',
      MAX_BACK_MS: '3000',
    });
    expect(second.code).toBe(0);
    const a = readIds(before);
    const b = readIds(after);
    expect(a.length).toBeGreaterThanOrEqual(20_000);
    expect(min(b)).toBeGreaterThan(max(a));
    expect(new Set([...a, ...b]).size).toBe(a.length + b.length);
  });

  it('a restart with the clock 5 s behind fails with ClockMovedBackwardsError and issues nothing', async () => {
    const dir = tempDir('restart');
    const first = await run('restart.mjs', { CLAIM_DIR: dir, OUT: join(dir, 'before.ids'), COUNT: '1000' });
    expect(first.code).toBe(0);
    const second = await run('restart.mjs', {
      CLAIM_DIR: dir,
      OUT: join(dir, 'after.ids'),
      COUNT: '1000',
      OFFSET_MS: '-5000',
    });
    expect(second.stdout).toMatch(/error ClockMovedBackwardsError ERR_IDS_CLOCK_BACKWARDS/);
    expect(second.code).toBe(3);
    expect(existsSync(join(dir, 'after.ids'))).toBe(false);
  });
});
