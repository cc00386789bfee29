import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { hasRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { check } from '../index.mjs';

const script = join(__dirname, '..', 'index.mjs');

describe('examples/redis-fleet', () => {
  it.skipIf(!hasRedis())(
    '8 processes share 4 machine IDs through Redis; every ID is unique',
    { timeout: 90_000 },
    () => {
      const run = spawnSync(process.execPath, [script, '--workers', '8', '--bits', '2', '--ids', '3000'], {
        encoding: 'utf8',
        timeout: 80_000,
      });
      // A holder taking over an ID may wait a few ms for the time its predecessor recorded: that
      // notice (RecordedTimeWait) is expected in a fleet; anything else on stderr is not.
      const unexpected = run.stderr
        .split('\n')
        .filter(
          (line) =>
            line !== '' &&
            !/RecordedTimeWait: waiting \d+ ms before issuing|^\(Use `node --trace-warnings/.test(line),
        );
      expect(unexpected).toEqual([]);
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(
        /8 processes, a 2-bit machine field \(4 machine IDs\), clocks up to 750 ms apart/,
      );
      const machines = run.stdout.split('\n').filter((line) => line.startsWith('machine '));
      expect(machines).toHaveLength(4);
      // 8 processes over 4 IDs: every machine ID was taken over at least once... or some twice.
      const holders = machines.map((line) => line.split('pid ').length - 1);
      expect(holders.reduce((a, b) => a + b, 0)).toBe(8);
      expect(run.stdout).toMatch(
        /checked 24,000 IDs from 8 processes: all unique, .* issued only IDs above the earlier one's/,
      );
    },
  );

  it('the checker catches a duplicate, a wrong machine field, and a holder that started too early', () => {
    const ok = { pid: 1, machineId: 1, claimedAt: 100, ids: ['1000001', '2000001'] };
    expect(check([ok], 2).problems).toEqual([]);
    expect(check([ok, { pid: 2, machineId: 1, claimedAt: 200, ids: ['2000001'] }], 2).problems[0]).toMatch(
      /ID 2000001 was issued by pid 1 and pid 2/,
    );
    expect(check([{ pid: 3, machineId: 2, claimedAt: 0, ids: ['1000001'] }], 2).problems[0]).toMatch(
      /carries machine 1, not 2/,
    );
    // Took over later, but its clock was behind: its IDs sort below its predecessor's.
    expect(check([ok, { pid: 4, machineId: 1, claimedAt: 300, ids: ['500001'] }], 2).problems[0]).toMatch(
      /machine 1: pid 4 took over from pid 1 but issued ID 500001, not above its last, 2000001/,
    );
  });
});
