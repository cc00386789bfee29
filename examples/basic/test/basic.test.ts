import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseMachineId } from '../index.mjs';

const script = join(__dirname, '..', 'index.mjs');

describe('examples/basic (the main job of npm start)', () => {
  it('runs, says how it chose the machine ID, and prints decomposed IDs', () => {
    const run = spawnSync(process.execPath, [script], {
      env: { ...process.env, IDS_MACHINE_ID: '321' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^machine ID 321: IDS_MACHINE_ID from the environment/);
    const rows = run.stdout.split('\n').filter((line) => /^\d{15,}\s/.test(line));
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row).toMatch(/^\d+\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+\d+\s+321$/);
  });

  it('keeps a drawn machine ID in its file and reuses it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ids-basic-')), 'machine-id');
    const interfaces = { IDS_MACHINE_ID: '' };
    const first = chooseMachineId(interfaces, file);
    // Where the host has a private IPv4 the Go rule wins and no file is written.
    if (/private IPv4/.test(first.how)) return;
    expect(first.how).toMatch(/drew \d+ at random and kept it in/);
    expect(Number(readFileSync(file, 'utf8'))).toBe(first.machineId);
    const second = chooseMachineId(interfaces, file);
    expect(second.machineId).toBe(first.machineId);
    expect(second.how).toMatch(/kept in/);
  });

  it('refuses a kept file holding garbage instead of replacing it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ids-basic-')), 'machine-id');
    writeFileSync(file, 'banana\n');
    const attempt = () => chooseMachineId({}, file);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).toMatch(/holds "banana", expected an integer from 0 to 65535/);
      return;
    }
    // Only a host with a private IPv4 never reads the file.
    expect(attempt().how).toMatch(/private IPv4/);
  });

  it('rejects an IDS_MACHINE_ID that is not a 16-bit integer', () => {
    expect(() => chooseMachineId({ IDS_MACHINE_ID: '70000' })).toThrow(
      /expected an integer from 0 to 65535, received "70000"/,
    );
    expect(() => chooseMachineId({ IDS_MACHINE_ID: '1e3' })).toThrow(/received "1e3"/);
  });
});
