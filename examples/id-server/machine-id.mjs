// The one place the server decides its machine ID. Everything else takes whatever this returns
// and hands it to `Sonyflake.create`, which accepts a number, a provider (sync or async) or a
// claim, so a different strategy (a machine ID kept in a file, an etcd lease) is a change to
// this file only.
import { InvalidMachineIdError } from '@ids/sonyflake';

/**
 * The machine-ID setting for the server's Sonyflake: the `machineId` option when given, else
 * `IDS_MACHINE_ID` from the environment (a decimal integer; Sonyflake checks its range, 0 to
 * 65535 by default), else undefined, which leaves Sonyflake's own default (the low 16 bits of a
 * private IPv4 address; `NoPrivateAddressError` on hosts without one).
 *
 * @param {{ machineId?: import('@ids/sonyflake').MachineIdSource }} options
 * @param {Record<string, string | undefined>} env
 * @returns {import('@ids/sonyflake').MachineIdSource | undefined}
 * @throws {InvalidMachineIdError} when IDS_MACHINE_ID is set but is not a decimal integer
 */
export function machineIdSetting(options, env = process.env) {
  if (options.machineId !== undefined) return options.machineId;
  const fromEnv = env.IDS_MACHINE_ID;
  if (fromEnv === undefined || fromEnv === '') return undefined;
  // Number() would read "1e3", "0x10" and " 7" too; a machine ID is plain digits or an error.
  if (!/^[0-9]{1,10}$/.test(fromEnv)) {
    throw new InvalidMachineIdError(
      `IDS_MACHINE_ID: expected a decimal integer from 0 to 65535, received ${JSON.stringify(fromEnv)}`,
    );
  }
  return Number(fromEnv);
}
