import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { comparison } from '../index.mjs';

describe('examples/layout-compare', { timeout: 60_000 }, () => {
  it('compares the presets and a layout of our own', () => {
    const rows = comparison();
    expect(rows.map((r) => r.layout)).toEqual([
      'sonyflake (2014)',
      'sonyflake (2025)',
      'twitter',
      'discord',
      'ours',
    ]);
    expect(rows[0]).toMatchObject({
      years: 174,
      'ends at': '2188-11-16T03:28:58.880Z',
      'IDs/s per machine': 25_600,
    });
    expect(rows[2]).toMatchObject({ years: 69, 'IDs/s per machine': 4_096_000, machines: 1024 });
    // 40 bits of 10 ms: twice Sonyflake's lifetime; 2048 per 10 ms; 4096 machines.
    expect(rows[4]).toMatchObject({ years: 348, 'IDs/s per machine': 204_800, machines: 4096 });
  });

  it('runs and prints the table', () => {
    const run = spawnSync(process.execPath, [join(__dirname, '..', 'index.mjs')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/sonyflake \(2014\).*174.*2188-11-16T03:28:58\.880Z/);
    expect(run.stdout).toMatch(/'twitter'.*69/);
  });
});
