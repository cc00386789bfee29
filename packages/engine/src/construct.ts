// The constructor/create() pair every generator preset offers: a synchronous constructor for
// numeric machine IDs and synchronous providers, and an async `create()` that may await a
// provider or a check. The machine ID is resolved once, by whichever of the two runs first.
import type { Layout } from './layout.js';
import {
  isClaim,
  type MachineIdCheck,
  type MachineIdClaim,
  type MachineIdSource,
  resolveMachineId,
  resolveMachineIdSync,
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

// Machine IDs that createGenerator() already resolved and checked, keyed by the settings object
// it hands to the constructor, so the constructor neither runs the provider twice nor needs a
// second, internal signature.
const resolved = new WeakMap<object, number | MachineIdClaim>();

/**
 * The machine ID for a preset's constructor: the one `createGenerator` resolved for this very
 * settings object, else the request resolved now, synchronously.
 *
 * @throws what resolveMachineIdSync throws: MachineIdProviderError (cause: the provider's error),
 * InvalidMachineIdError, MachineIdRejectedError, AsyncSettingError for a Promise.
 */
export function constructorMachineId(settings: object, request: MachineIdRequest): number | MachineIdClaim {
  return resolved.get(settings) ?? resolveMachineIdSync(request.layout, request.source, request.check);
}

/**
 * The body of a preset's static `create()`: resolves the machine ID (provider and check may be
 * async), then builds the generator with `construct`, which receives a copy of `settings` that
 * `constructorMachineId` recognises. If construction throws, a claimed ID is released before
 * the error is passed on, so a failed create() never leaves an ID held.
 *
 * @throws what resolveMachineId throws, or what `construct` throws.
 */
export async function createGenerator<S extends object, G>(
  settings: S,
  request: MachineIdRequest,
  construct: (settings: S) => G,
): Promise<G> {
  const machineId = await resolveMachineId(request.layout, request.source, request.check);
  const carrier = { ...settings };
  resolved.set(carrier, machineId);
  try {
    return construct(carrier);
  } catch (error) {
    if (isClaim(machineId)) await Promise.resolve(machineId.release()).catch(() => undefined);
    throw error;
  }
}
