// Sonyflake over @ids/machine-file's host claims (a dev dependency here: machine-file itself no
// longer depends on this package, so that the two form no cycle).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostClaim, type ProcessTable } from '@ids/machine-file';
import { describe, expect, it } from 'vitest';
import { Sonyflake } from '../src/index.js';

/** A process table where only this test's fake pid 100 is alive. */
const table: ProcessTable = {
  pid: 100,
  exists: (pid) => pid === 100,
  startOf: (pid) => (pid === 100 ? '1000' : undefined),
  bootId: () => 'boot-1',
  hostname: () => 'test-host',
};

describe('Sonyflake on a host claim', () => {
  it('a bad generator setting is refused before the machine ID is claimed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-sonyflake-claim-'));
    const machineId = hostClaim({ dir, processes: table, releaseOnExit: false });
    expect(() => new Sonyflake({ machineId, onError: 5 as never })).toThrow(/onError: expected a function/);
    expect(readdirSync(dir)).toEqual([]);
    rmSync(dir, { recursive: true });
  });
});
