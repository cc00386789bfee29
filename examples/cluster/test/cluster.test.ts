import { spawnSync } from 'node:child_process';
import cluster from 'node:cluster';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AutoMachineId,
  AutoMachineIdError,
  autoMachineId,
  claimHostMachineId,
  HeldFileInUseError,
} from '@ids/machine-file';
import { compose, decompose, InvalidArgumentError, toTime } from '@ids/sonyflake';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { check, main } from '../index.mjs';

const script = join(__dirname, '..', 'index.mjs');
const dirs: string[] = [];
const claimDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ids-cluster-'));
  dirs.push(dir);
  return dir;
};
const claimFile = (dir: string, id: number) => JSON.parse(readFileSync(join(dir, `${id}.claim`), 'utf8'));
const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('examples/cluster', { timeout: 60_000 }, () => {
  it('3 workers hold 3 distinct host-claimed machine IDs at once; their IDs are unique; they release the claims and exit', async () => {
    const dir = claimDir();
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const { reports } = await main({ workers: 3, count: 1000, claimDir: dir, env: {} });

    expect(reports.map((r) => r.machineId).sort()).toEqual([0, 1, 2]);
    const all = reports.flatMap((r) => r.ids);
    expect(all).toHaveLength(3000);
    expect(new Set(all).size).toBe(3000);
    for (const r of reports) expect(r.ids.every((id) => decompose(id).machine === r.machineId)).toBe(true);
    // Each claim was released by the worker that held it, recording at least its last ID's time.
    expect(readdirSync(dir).sort()).toEqual(['0.claim', '1.claim', '2.claim']);
    for (const r of reports) {
      const record = claimFile(dir, r.machineId);
      expect(record).toMatchObject({ state: 'released', pid: r.pid });
      expect(record.recordedMs).toBeGreaterThanOrEqual(toTime(r.ids.at(-1)!).getTime());
      expect(running(r.pid)).toBe(false);
    }
    expect(Object.keys(cluster.workers ?? {})).toEqual([]);

    const out = log.mock.calls.map((c) => c[0]).join('\n');
    expect(out).toContain(`3 workers, each with a machine ID of its own from a host claim in ${dir}:`);
    for (const r of reports) {
      expect(out).toContain(
        `worker ${r.index} (pid ${r.pid}): machine ID ${r.machineId} - claimed ${join(dir, `${r.machineId}.claim`)} (a machine ID not claimed here before)`,
      );
    }
    expect(out).toMatch(/checked 3,000 IDs from 3 workers: all unique; machine IDs 0, 1, 2, one per worker/);
    expect(out).toMatch(
      /every worker closed its generator and exited; \d\.claim released, \d\.claim released, \d\.claim released/,
    );
  });

  it('workers skip an ID another live process holds, and take over released ones after the time recorded', async () => {
    const dir = claimDir();
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const first = await main({ workers: 2, count: 500, claimDir: dir, env: {} });
    // This process now holds ID 0 (the first run released it): the workers must not get it.
    const held = claimHostMachineId(16, { dir });
    expect(held.machineId).toBe(0);
    try {
      const second = await main({ workers: 2, count: 500, claimDir: dir, env: {} });
      expect(second.reports.map((r) => r.machineId).sort()).toEqual([1, 2]);
      const worker1 = second.reports.find((r) => r.machineId === 1)!;
      expect(worker1.trail).toMatch(/released by pid \d+; IDs start after/);
      // Machine ID 1 went from a worker of the first run to one of the second: its IDs come after.
      const before = first.reports.find((r) => r.machineId === 1)!.ids.at(-1)!;
      expect(worker1.ids[0]!).toBeGreaterThan(before);
    } finally {
      await held.release();
    }
  });

  it('why the example does not use autoMachineId: with a private IPv4, a second worker of the host gets HeldFileInUseError', async () => {
    const dir = claimDir();
    const interfaces = () => ({ eth0: [{ address: '10.0.4.7', family: 'IPv4', internal: false }] });
    let first = undefined as unknown as AutoMachineId;
    autoMachineId({ env: {}, interfaces, claim: { dir }, onChosen: (auto) => (first = auto) })({ bits: 16 });
    try {
      expect(first.step).toBe('private-ip');
      expect(first.id).toBe(4 * 256 + 7);
      let error: unknown;
      try {
        autoMachineId({ env: {}, interfaces, claim: { dir } })({ bits: 16 });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AutoMachineIdError);
      expect((error as Error).cause).toBeInstanceOf(HeldFileInUseError);
    } finally {
      if (typeof first.machineId !== 'number') await first.machineId.release();
    }
  });

  it('a worker that cannot claim makes main() fail, naming it and why, and leaves no worker running', async () => {
    const notADir = join(claimDir(), 'file');
    writeFileSync(notADir, 'not a directory');
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    await expect(main({ workers: 2, count: 100, claimDir: notADir, env: {} })).rejects.toThrow(
      /^worker \d: ClaimDirError: the claim directory .*file cannot be used/,
    );
    expect(Object.keys(cluster.workers ?? {})).toEqual([]);
  });

  it('bad counts are typed errors, raised before any worker is forked', async () => {
    const dir = claimDir();
    await expect(main({ workers: 0, claimDir: dir })).rejects.toThrow(InvalidArgumentError);
    await expect(main({ workers: 65, claimDir: dir })).rejects.toThrow(
      'workers: expected an integer from 1 to 64, received 65',
    );
    await expect(main({ count: -1, claimDir: dir })).rejects.toThrow(
      'count: expected an integer from 1 to 1,000,000, received -1',
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('the check catches a shared machine ID, an ID issued twice, a worker going backwards and a wrong machine field', () => {
    const t = Date.UTC(2026, 0, 1);
    const id = (ms: number, seq: number, machine: number) => compose(t + ms, seq, machine);
    const report = (index: number, machineId: number, ids: bigint[]) => ({
      index,
      pid: 100 + index,
      machineId,
      trail: '',
      ids,
    });
    expect(check([report(0, 1, [id(0, 0, 1), id(0, 1, 1)]), report(1, 2, [id(0, 0, 2)])])).toEqual([]);
    expect(check([report(0, 1, [id(0, 0, 1)]), report(1, 1, [id(10, 0, 1)])])).toEqual([
      'workers 0 and 1 both held machine ID 1',
    ]);
    expect(check([report(0, 1, [id(0, 0, 1)]), report(1, 2, [id(0, 0, 1)])])).toEqual([
      `ID ${id(0, 0, 1)} was issued by worker 0 and worker 1`,
      `worker 1: ID ${id(0, 0, 1)} carries machine 1, not its machine ID 2`,
    ]);
    expect(check([report(0, 1, [id(10, 0, 1), id(0, 0, 1)])])).toEqual([
      `worker 0: ID ${id(0, 0, 1)} (#1) is not above the ID before it, ${id(10, 0, 1)}`,
    ]);
  });

  it('`node index.mjs` forks 4 workers by default, checks their IDs, releases every claim and exits', () => {
    const dir = claimDir();
    const run = spawnSync(process.execPath, [script], {
      env: { ...process.env, IDS_CLAIM_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^4 workers, each with a machine ID of its own from a host claim in ${dir}:`),
    );
    const workers = [...run.stdout.matchAll(/worker (\d) \(pid (\d+)\): machine ID (\d+) - claimed /g)];
    expect(workers.map((m) => m[3]).sort()).toEqual(['0', '1', '2', '3']);
    expect(run.stdout).toMatch(
      /checked 40,000 IDs from 4 workers: all unique; machine IDs 0, 1, 2, 3, one per worker/,
    );
    for (const [, , pid, id] of workers) {
      expect(claimFile(dir, Number(id))).toMatchObject({ state: 'released', pid: Number(pid) });
      expect(running(Number(pid))).toBe(false);
    }
  });
});
