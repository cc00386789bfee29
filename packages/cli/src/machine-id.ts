// The one place the `ids` command decides its machine ID, and records why: every step says what
// it found, so `ids machine-id --explain` can show which step produced the ID and why the
// earlier ones did not. Order: --machine-id, then IDS_MACHINE_ID, then the private IPv4 rule.
import { IdsError, InvalidMachineIdError, received } from '@ids/engine';
import { type InterfaceSource, privateIPv4, privateIpMachineId } from '@ids/machine-ip';

/** Where a machine ID can come from, in the order they are tried. */
export type MachineIdStepName = '--machine-id' | 'IDS_MACHINE_ID' | 'private IPv4';

/** One step of the choice: what it found. */
export interface MachineIdStep {
  readonly step: MachineIdStepName;
  /** True for the step that produced the ID (always the last one tried). */
  readonly chosen: boolean;
  /** What the step saw: the value and where it came from, or why it gave nothing. */
  readonly detail: string;
}

export interface MachineIdChoice {
  readonly machineId: number;
  /** The step that produced it. */
  readonly step: MachineIdStepName;
  /** Every step tried, in order; the last one is the chosen one. */
  readonly steps: readonly MachineIdStep[];
}

export interface MachineIdOptions {
  /** Bits of the layout's machine field: an ID must be below 2^bits. */
  readonly bits: number;
  /** The `--machine-id` value as typed, if given. */
  readonly flag?: string | undefined;
  /** Where IDS_MACHINE_ID is read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The interface list for the private IPv4 step. Default: os.networkInterfaces. */
  readonly interfaces?: InterfaceSource;
}

/** No step produced a machine ID. `steps` says why each one did not. */
export class NoMachineIdError extends IdsError {
  readonly code = 'ERR_IDS_NO_MACHINE_ID';
  override readonly name = 'NoMachineIdError';
  constructor(
    message: string,
    readonly steps: readonly MachineIdStep[],
  ) {
    super(message);
  }
}

function explicit(value: string, where: string, bits: number): number {
  const max = 2 ** bits - 1;
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) > max) {
    throw new InvalidMachineIdError(
      `${where}: expected an integer from 0 to ${max} (the layout's ${bits} machine bits), received ${received(value)}`,
    );
  }
  return Number(value);
}

/** The first sentence of an error: what went wrong (the advice after it is given once, below). */
function reason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('. ')[0]!;
}

/**
 * Chooses the machine ID: `--machine-id`, else IDS_MACHINE_ID, else the low 16 bits of the
 * first private IPv4 address (Go's rule; refused when it does not fit `bits`).
 *
 * @throws InvalidMachineIdError when --machine-id or IDS_MACHINE_ID is not an integer that fits
 * (a value the user typed); NoMachineIdError when no step produced one, saying how to give one.
 */
export async function chooseMachineId(options: MachineIdOptions): Promise<MachineIdChoice> {
  const { bits, flag } = options;
  const env = options.env ?? process.env;
  const steps: MachineIdStep[] = [];
  const done = (step: MachineIdStepName, machineId: number, detail: string): MachineIdChoice => {
    steps.push({ step, chosen: true, detail });
    return { machineId, step, steps };
  };

  if (flag !== undefined) return done('--machine-id', explicit(flag, '--machine-id', bits), `given: ${flag}`);
  steps.push({ step: '--machine-id', chosen: false, detail: 'not given' });

  const fromEnv = env.IDS_MACHINE_ID;
  if (fromEnv !== undefined && fromEnv !== '') {
    return done(
      'IDS_MACHINE_ID',
      explicit(fromEnv, 'IDS_MACHINE_ID', bits),
      `set in the environment: ${fromEnv}`,
    );
  }
  steps.push({ step: 'IDS_MACHINE_ID', chosen: false, detail: 'not set' });

  const interfaces = options.interfaces === undefined ? {} : { interfaces: options.interfaces };
  try {
    // The provider answers a number (its type is the general provider's, which allows claims).
    const machineId = Number(await privateIpMachineId(interfaces)({ bits }));
    const address = privateIPv4(options.interfaces);
    return done(
      'private IPv4',
      machineId,
      `${address} gives ${machineId} (third octet * 256 + fourth, Go's rule), which fits ${bits} bits`,
    );
  } catch (error) {
    steps.push({ step: 'private IPv4', chosen: false, detail: reason(error) });
  }
  throw new NoMachineIdError(
    `no machine ID: ${steps.map((s) => `${s.step}: ${s.detail}`).join('; ')}. Give one with --machine-id N or IDS_MACHINE_ID=N (0 to ${2 ** bits - 1} for this layout)`,
    steps,
  );
}
