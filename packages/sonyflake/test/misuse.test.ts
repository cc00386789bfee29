import { inspect } from 'node:util';
import type { MachineIdClaim } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { DuplicateGeneratorError, Sonyflake } from '../src/index.js';

// The common misuse: a new generator per call, with one machine ID. Without the guard, 989 of
// 1,000 such IDs were duplicates. The package's test config turns the guard off
// (IDS_SAME_MACHINE_ID=allow); these tests ask for it.
describe('a new Sonyflake per call, with one machine ID', () => {
  it('the second is refused while the first is live, naming this file as where the first was made', async () => {
    const issue = async () => {
      const sonyflake = await Sonyflake.create({ machineId: 77, sameMachineId: 'refuse' });
      return { sonyflake, id: await sonyflake.nextId() };
    };
    const first = await issue();
    const error = await issue().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateGeneratorError);
    expect((error as Error).message).toMatch(
      /layout sonyflake .* machine ID 77: it was created at .*misuse\.test\.ts:\d+/,
    );
    await first.sonyflake.close();
    const again = await issue();
    await again.sonyflake.close();
  });

  it('a claimed machine ID is released when create() is refused', async () => {
    const first = await Sonyflake.create({ machineId: 78, sameMachineId: 'refuse' });
    let released = 0;
    const claim: MachineIdClaim = { machineId: 78, release: () => void released++ };
    await expect(Sonyflake.create({ machineId: async () => claim, sameMachineId: 'refuse' })).rejects.toThrow(
      DuplicateGeneratorError,
    );
    expect(released).toBe(1);
    await first.close();
  });
});

describe('as a user sees it', () => {
  it('keeps its class name through the build', async () => {
    expect(Sonyflake.name).toBe('Sonyflake');
    // The built file, as a user loads it (a path in a variable: typechecking may run before the build).
    const dist = '../dist/index.js';
    const built = (await import(dist)) as typeof import('../src/index.js');
    expect(built.Sonyflake.name).toBe('Sonyflake');
  });

  it('shows its layout and machine ID to util.inspect and JSON', async () => {
    const sonyflake = new Sonyflake({ machineId: 12 });
    expect(inspect(sonyflake)).toBe("Sonyflake { layout: 'sonyflake', machineId: 12 }");
    expect(JSON.stringify({ generator: sonyflake })).toBe(
      '{"generator":{"layout":"sonyflake","machineId":12,"closed":false}}',
    );
    await sonyflake.close();
    expect(inspect(sonyflake)).toBe("Sonyflake { layout: 'sonyflake', machineId: 12, closed }");
  });

  it('await using closes it and releases its claim at the end of the scope', async () => {
    let released = 0;
    const claim: MachineIdClaim = { machineId: 13, release: () => void released++ };
    {
      await using sonyflake = await Sonyflake.create({ machineId: claim });
      await sonyflake.nextId();
      expect(released).toBe(0);
    }
    expect(released).toBe(1);
  });
});
