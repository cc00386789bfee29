// The one place the server decides its machine ID. Everything else takes what this returns and
// hands it to `Sonyflake.create`, which accepts a number, a provider or a claim, so another
// strategy (an etcd lease from @ids/machine-etcd, say) is a change to this file only.
import { autoMachineId } from '@ids/machine-file';

/**
 * The machine ID for the server's Sonyflake, and how it was chosen: the `machineId` option when
 * given, else the auto chain of the machine-file package: IDS_MACHINE_ID, then the private IPv4 address
 * (held as a host claim), then a host claim in IDS_CLAIM_DIR (default
 * ~/.local/state/ids/claims). A claim is released when the server closes its generator.
 *
 * @param {{ machineId?: import('@ids/sonyflake').SonyflakeSettings['machineId'] }} options
 * @param {Record<string, string | undefined>} env Where IDS_MACHINE_ID and IDS_CLAIM_DIR are read.
 * @returns {{ machineId: import('@ids/sonyflake').SonyflakeSettings['machineId'], how: string }}
 * @throws {import('@ids/machine-file').AutoMachineIdError} when no step gives an ID; its `cause`
 *   is the typed error that stopped the chain (InvalidMachineIdError for a bad IDS_MACHINE_ID).
 */
export function chooseMachineId(options, env = process.env) {
  if (options.machineId !== undefined)
    return { machineId: options.machineId, how: 'given as the machineId option' };
  const auto = autoMachineId({ env });
  return { machineId: auto.machineId, how: auto.explain() };
}
