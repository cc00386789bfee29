import { describe, expect, it } from 'vitest';
import { claimHostMachineId } from '../src/index.js';
import { createGenerator, tempDir } from './helpers.js';

// `await using` is how a scope gives back what it took: a generator closes (releasing its host
// claim), and a claim no generator took releases itself.
describe('await using', () => {
  it('a generator on a host claim releases the claim at the end of the scope', async () => {
    const dir = tempDir();
    let inside: number;
    {
      await using sonyflake = await createGenerator({
        machineId: claimHostMachineId(16, { dir, releaseOnExit: false }),
      });
      inside = sonyflake.machine;
      await sonyflake.nextId();
      // Held: a second claim in the directory gets the next ID.
      const other = claimHostMachineId(16, { dir, releaseOnExit: false });
      expect(other.machineId).toBe(inside + 1);
      other.release();
    }
    // Released: the lowest ID is free again.
    const again = claimHostMachineId(16, { dir, releaseOnExit: false });
    expect(again.machineId).toBe(inside);
    again.release();
  });

  it('a host claim by itself releases at the end of the scope', async () => {
    const dir = tempDir();
    {
      await using claim = claimHostMachineId(16, { dir, releaseOnExit: false });
      expect(claim.machineId).toBe(0);
      expect(claimHostMachineId(16, { dir, releaseOnExit: false }).machineId).toBe(1);
    }
    const again = claimHostMachineId(16, { dir, releaseOnExit: false });
    expect(again.machineId).toBe(0);
    again.release();
  });
});
