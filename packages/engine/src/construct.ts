// The constructor/create() pair every generator preset offers: a synchronous constructor for
// numeric machine IDs and synchronous providers, and an async `create()` that may await a
// provider or a check. `create()` resolves the machine ID, then builds with the resolved number
// or claim as the `machineId` setting (and no check), so the constructor has nothing left to run.
import type { Layout } from './layout.js';
import {
  type MachineIdCheck,
  type MachineIdClaim,
  type MachineIdSource,
  releaseQuietly,
  resolveMachineId,
} from './machine.js';

/** What a preset needs to resolve its machine ID: the layout (for the field width), the source, the check. */
export interface MachineIdRequest {
  /** The preset's layout: its machine field's width bounds the ID. */
  readonly layout: Layout;
  /** The `machineId` setting as the user gave it (after the preset applied its default). */
  readonly source: MachineIdSource;
  /** The `checkMachineId` setting; none accepts every ID in range. */
  readonly check?: MachineIdCheck | undefined;
}

/**
 * The body of a preset's static `create()`: resolves the machine ID (provider and check may be
 * async), then calls `build` with it. If `build` throws, a claimed ID is released before the
 * error is passed on, so a failed create() never leaves an ID held.
 *
 * @throws what resolveMachineId throws, or what `build` throws.
 */
export async function createWithMachineId<G>(
  request: MachineIdRequest,
  build: (machineId: number | MachineIdClaim) => G,
): Promise<G> {
  const machineId = await resolveMachineId(request.layout, request.source, request.check);
  try {
    return build(machineId);
  } catch (error) {
    await releaseQuietly(machineId);
    throw error;
  }
}
