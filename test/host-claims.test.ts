import { join } from 'node:path';
import { decompose } from '@ids/sonyflake';
import { describe, expect, it } from 'vitest';
import { listDir, max, min, readIds, readJson, run, tempDir } from './helpers.js';

// Several processes of one host, each drawing its machine ID from one claim directory, with the
// built packages. Real processes, real files, real SIGKILL.

interface Report {
  index: number;
  pid: number;
  machineId: number;
  tookOver: { state: string; pid: number; recordedMs: number | null } | null;
  lastMs: number;
  killed?: boolean;
  killedAfter?: number;
}

describe('host claims across processes (node:cluster)', () => {
  it('8 workers x 100,000 IDs are unique; a worker killed with SIGKILL is replaced by one that takes over its claim, still no duplicate', async () => {
    const dir = tempDir('claims');
    const out = tempDir('ids');
    const result = await run('cluster-claims.mjs', {
      CLAIM_DIR: dir,
      OUT_DIR: out,
      COUNT: '100000',
      WORKERS: '8',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const reports: Report[] = JSON.parse(result.stdout);
    const first = reports.filter((r) => r.index < 8);
    const victim = reports.find((r) => r.killed)!;
    const replacement = reports.find((r) => r.index === 8)!;

    // Eight distinct machine IDs, each a fresh claim.
    expect(first.map((r) => r.machineId).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(first.every((r) => r.tookOver === null)).toBe(true);
    // The replacement could only take the dead worker's ID, and says so.
    expect(replacement.machineId).toBe(victim.machineId);
    expect(replacement.tookOver).toMatchObject({ state: 'abandoned', pid: victim.pid });

    const all: bigint[] = [];
    for (const r of reports) {
      const ids = readIds(join(out, `${r.index}.ids`));
      expect(ids).toHaveLength(100_000);
      expect(ids.every((id) => decompose(id).machine === r.machineId)).toBe(true);
      all.push(...ids);
    }
    const victimMore = readIds(join(out, `${victim.index}.more.ids`));
    expect(victimMore.length).toBeGreaterThanOrEqual(victim.killedAfter!);
    all.push(...victimMore);
    expect(all.length).toBeGreaterThanOrEqual(900_000 + 10_000);
    expect(new Set(all).size).toBe(all.length);
    // Same machine ID, so the replacement's IDs come after every ID the killed worker wrote.
    const replacementIds = readIds(join(out, '8.ids'));
    expect(min(replacementIds)).toBeGreaterThan(
      max([...readIds(join(out, `${victim.index}.ids`)), ...victimMore]),
    );

    // Clean exits released every claim, recording at least each holder's last tick; nothing else is left.
    expect(listDir(dir)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((id) => `${id}.claim`).sort());
    for (const r of reports.filter((x) => !x.killed)) {
      const claim = readJson(join(dir, `${r.machineId}.claim`));
      expect(claim).toMatchObject({ state: 'released', pid: r.pid });
      expect(claim.recordedMs as number).toBeGreaterThanOrEqual(r.lastMs);
    }
  });
});
