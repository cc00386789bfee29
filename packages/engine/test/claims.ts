import { type Mock, vi } from 'vitest';
import type { MachineIdClaim } from '../src/machine.js';

/** A claim for tests: an abort controller for its signal, the times recorded, a spied release. */
export function claimOf(
  machineId: number,
  extra: Partial<MachineIdClaim> = {},
): { claim: MachineIdClaim & { release: Mock }; controller: AbortController; recorded: number[] } {
  const controller = new AbortController();
  const recorded: number[] = [];
  const claim = {
    machineId,
    signal: controller.signal,
    record: (ms: number) => {
      recorded.push(ms);
    },
    release: vi.fn(),
    ...extra,
  } as MachineIdClaim & { release: Mock };
  return { claim, controller, recorded };
}
