// IDS_MACHINE_ID, read in one place for every entry point: the library's default machine ID
// (@ids/sonyflake), the `auto` chain's explicit step (@ids/machine-file, so the CLI too) and
// ids-server's explicit IDs, which take a comma-separated list, one ID per generator.
import { InvalidMachineIdError, received } from './errors.js';

/** The environment variable that gives a machine ID explicitly (a list, one per generator, to ids-server). */
export const MACHINE_ID_ENV = 'IDS_MACHINE_ID';

/** What `parseMachineIds` checks besides the digits. */
export interface MachineIdLimits {
  /** The largest ID allowed (2^bits - 1). Default: no bound but the ten digits. */
  readonly max?: number;
  /** How many IDs the text must hold. Default 1; `'any'`: one or more, comma-separated. */
  readonly count?: number | 'any';
}

/**
 * Machine IDs written as text: decimal digits only (Number() would also take "1e3", "0x10" and
 * " 7 "), comma-separated when more than one is wanted, spaces around the commas allowed. A number
 * (an option given in code) is checked against the same limits.
 * @throws InvalidMachineIdError naming `from` (a flag or variable), with what was expected and
 * what was received.
 */
export function parseMachineIds(
  value: string | number,
  from: string,
  limits: MachineIdLimits = {},
): number[] {
  const { max, count = 1 } = limits;
  const range = max === undefined ? '' : ` from 0 to ${max}`;
  const expected =
    count === 1
      ? `an integer${range}`
      : `${count === 'any' ? '' : `${count} `}machine IDs${range}, comma-separated`;
  // Spaces around a list's commas are layout; one ID is taken exactly as typed.
  const parts = typeof value === 'string' && count !== 1 ? value.split(',').map((p) => p.trim()) : [value];
  const ids = parts.map((part) =>
    typeof part === 'number' ? part : /^\d{1,10}$/.test(part) ? Number(part) : Number.NaN,
  );
  const fits = (id: number) => Number.isInteger(id) && (max === undefined || id <= max);
  if ((count !== 'any' && ids.length !== count) || !ids.every(fits)) {
    throw new InvalidMachineIdError(`${from}: expected ${expected}, received ${received(value)}`);
  }
  return ids;
}

/**
 * IDS_MACHINE_ID of `env`, parsed: undefined when it is unset or blank.
 * @throws InvalidMachineIdError as `parseMachineIds` does.
 */
export function envMachineIds(
  env: Readonly<Record<string, string | undefined>>,
  limits: MachineIdLimits = {},
): number[] | undefined {
  const text = env[MACHINE_ID_ENV];
  if (text === undefined || text.trim() === '') return undefined;
  return parseMachineIds(text, MACHINE_ID_ENV, limits);
}
