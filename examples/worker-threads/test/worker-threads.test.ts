import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compose, decompose, InvalidArgumentError, toTime } from '@ids/sonyflake';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { check, main } from '../index.mjs';

const script = join(__dirname, '..', 'index.mjs');
const NO_PRIVATE = () => ({ eth0: [{ address: '192.0.2.10', family: 'IPv4', internal: false }] });
const dirs: string[] = [];
const claimDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ids-worker-threads-'));
  dirs.push(dir);
  return dir;
};
const claimFile = (dir: string, id: number) => JSON.parse(readFileSync(join(dir, `${id}.claim`), 'utf8'));
const increasing = (ids: readonly bigint[]) => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('examples/worker-threads', { timeout: 60_000 }, () => {
  it('4 threads on one host-claimed machine ID: 0 duplicates, each thread increasing; the claim is released after', async () => {
    const dir = claimDir();
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const run = await main({ threads: 4, count: 600, claimDir: dir, env: {}, interfaces: NO_PRIVATE });

    expect(run.auto.step).toBe('host-claim');
    expect(run.perThread).toHaveLength(4);
    const all = run.perThread.flat();
    expect(all).toHaveLength(2400);
    expect(new Set(all).size).toBe(2400);
    for (const ids of run.perThread) expect(increasing(ids)).toBe(true);
    expect(all.every((id) => decompose(id).machine === run.auto.id)).toBe(true);

    // Closed: the threads' generators were fenced, then the time reached was recorded and the
    // claim released by this process. Nothing else was left in the directory.
    let last = 0n;
    for (const id of all) if (id > last) last = id;
    const record = claimFile(dir, run.auto.id);
    expect(record).toMatchObject({ state: 'released', pid: process.pid });
    expect(record.recordedMs).toBeGreaterThanOrEqual(toTime(last).getTime());
    expect(readdirSync(dir)).toEqual([`${run.auto.id}.claim`]);

    const out = log.mock.calls.map((c) => c[0]).join('\n');
    expect(out).toMatch(/^machine ID 0, from the host-claim step:\n {2}1\. explicit ID: skipped/);
    expect(out).toContain(
      `6. host claim: used - machine ID 0, unique among the processes of this host using ${dir}`,
    );
    expect(out).toMatch(/4 worker threads drew 600 IDs each from one Sonyflake state under machine ID 0:/);
    expect(out).toMatch(/duplicates: 0; each thread's IDs increasing: yes/);
    expect(out).toContain(`claim ${join(dir, '0.claim')}: released`);

    // The next run takes the same ID over, and starts after every ID of this one.
    const again = await main({ threads: 2, count: 300, claimDir: dir, env: {}, interfaces: NO_PRIVATE });
    expect(again.auto.id).toBe(0);
    expect(again.auto.explain()).toMatch(/released by pid \d+; IDs start after/);
    expect(again.perThread.flat().every((id) => id > last)).toBe(true);
  });

  it('an explicit machine ID is shared the same way, and there is no claim to release', async () => {
    const dir = claimDir();
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const run = await main({ threads: 3, count: 400, env: { IDS_MACHINE_ID: '777', IDS_CLAIM_DIR: dir } });
    expect(run.auto.step).toBe('explicit');
    const all = run.perThread.flat();
    expect(new Set(all).size).toBe(1200);
    expect(all.every((id) => decompose(id).machine === 777)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
    expect(log.mock.calls.map((c) => c[0]).join('\n')).toContain('machine ID 777 was given, not claimed');
  });

  it('bad counts are typed errors, raised before any claim is taken', async () => {
    const dir = claimDir();
    const options = { claimDir: dir, env: {}, interfaces: NO_PRIVATE };
    await expect(main({ ...options, threads: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(main({ ...options, threads: 65 })).rejects.toThrow(
      'threads: expected an integer from 1 to 64, received 65',
    );
    await expect(main({ ...options, count: 2.5 })).rejects.toThrow(
      'count: expected an integer from 1 to 1,000,000, received 2.5',
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('the check catches an ID drawn twice, a thread going backwards, and a wrong machine field', () => {
    const t = Date.UTC(2026, 0, 1);
    const id = (ms: number, seq: number, machine = 3) => compose(t + ms, seq, machine);
    expect(
      check(
        [
          [id(0, 0), id(0, 2)],
          [id(0, 1), id(10, 0)],
        ],
        3,
      ),
    ).toEqual([]);
    expect(check([[id(0, 0)], [id(0, 0)]], 3)).toEqual([`ID ${id(0, 0)} was drawn by thread 0 and thread 1`]);
    expect(check([[id(10, 0), id(0, 5)]], 3)).toEqual([
      `thread 0: ID ${id(0, 5)} (#1) is not above the ID before it, ${id(10, 0)}`,
    ]);
    expect(check([[id(0, 0, 4)]], 3)).toEqual([`ID ${id(0, 0, 4)} carries machine 4, not 3`]);
  });

  it('`node index.mjs` runs 4 threads by default, checks them, releases its claim and exits', () => {
    const dir = claimDir();
    const { IDS_MACHINE_ID: _, ...env } = process.env;
    const run = spawnSync(process.execPath, [script], {
      env: { ...env, IDS_CLAIM_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // The step depends on this host's addresses (no private IPv4 here: a host claim); either
    // way the claim is taken in IDS_CLAIM_DIR.
    const [, id, step] = /^machine ID (\d+), from the (private-ip|host-claim) step:/.exec(run.stdout) ?? [];
    expect(step).toBeDefined();
    expect(run.stdout).toMatch(/4 worker threads drew 5,000 IDs each/);
    expect(run.stdout).toMatch(
      /20,000 IDs in [\d.]+ s, over \d+ ticks of 10 ms: [\d.]+% of their 256 slots each/,
    );
    expect(run.stdout).toMatch(
      /duplicates: 0; each thread's IDs increasing: yes; the threads drew at the same time: yes/,
    );
    expect(run.stdout).toContain(`claim ${join(dir, `${id}.claim`)}: released`);
    expect(claimFile(dir, Number(id))).toMatchObject({ state: 'released', pid: run.pid });
  });

  it('`node index.mjs` with a bad count says why and exits 1', () => {
    const run = spawnSync(process.execPath, [script, '--count', 'lots'], {
      env: { ...process.env, IDS_CLAIM_DIR: claimDir() },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'InvalidArgumentError: count: expected an integer from 1 to 1,000,000, received "lots"\n',
    );
  });
});
