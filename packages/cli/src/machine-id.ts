// The one place the `ids` command decides its machine ID, and records why: every step says what
// it found, so `ids machine-id --explain` can show which step produced the ID and why the
// earlier ones did not. Order: --machine-id, then IDS_MACHINE_ID (both typed by the user, so a
// bad value is a usage error), then the rest of @ids/machine-file's auto chain: the private
// IPv4 rule (held as a host claim), else a host claim in the claim directory.
import { IdsError, InvalidMachineIdError, type MachineIdClaim } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { AutoMachineIdError, type AutoStep, autoMachineId } from '@ids/machine-file';
import type { InterfaceSource } from '@ids/machine-ip';

/** Where a machine ID can come from, in the order they are tried. */
export type MachineIdStepName = '--machine-id' | 'IDS_MACHINE_ID' | 'private IPv4' | 'host claim';

/** One step of the choice: what it found. */
export interface MachineIdStep {
  /** Which step this was. */
  readonly step: MachineIdStepName;
  /** True for the step that produced the ID (always the last one tried). */
  readonly chosen: boolean;
  /** What the step saw: the value and where it came from, or why it gave nothing. */
  readonly detail: string;
}

/** The machine ID `chooseMachineId` settled on, and how it got there. */
export interface MachineIdChoice {
  /** The machine ID. */
  readonly machineId: number;
  /**
   * What to give the generator: the number, or the host claim that holds it (the generator
   * releases it on close; call `release()` when no generator takes it).
   */
  readonly source: number | MachineIdClaim;
  /** The step that produced it. */
  readonly step: MachineIdStepName;
  /** Every step tried, in order; the last one is the chosen one. */
  readonly steps: readonly MachineIdStep[];
}

/** What `chooseMachineId` works from: the layout's width, and the user's flag and environment. */
export interface MachineIdOptions {
  /** Bits of the layout's machine field: an ID must be below 2^bits. */
  readonly bits: number;
  /** The `--machine-id` value as typed, if given. */
  readonly flag?: string | undefined;
  /** Where IDS_MACHINE_ID and IDS_CLAIM_DIR are read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The interface list for the private IPv4 step. Default: os.networkInterfaces. */
  readonly interfaces?: InterfaceSource;
}

/** No step produced a machine ID. `steps` says why each one did not; `cause` is the last failure. */
export class NoMachineIdError extends IdsError {
  readonly code = 'ERR_IDS_NO_MACHINE_ID';
  override readonly name = 'NoMachineIdError';
  constructor(
    message: string,
    /** Every step tried, in order, each with why it gave no ID. */
    readonly steps: readonly MachineIdStep[],
    options?: ErrorOptions,
  ) {
    super(message, options);
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

const STEP_NAMES: Record<AutoStep['step'], MachineIdStepName | undefined> = {
  // Explicit IDs never reach the chain (they are handled above it, with their own names).
  explicit: undefined,
  'private-ip': 'private IPv4',
  'host-claim': 'host claim',
};

function fromChain(trail: readonly AutoStep[]): MachineIdStep[] {
  return trail.flatMap((s) => {
    const step = STEP_NAMES[s.step];
    return step ? [{ step, chosen: s.outcome === 'used', detail: s.detail }] : [];
  });
}

/**
 * Chooses the machine ID: `--machine-id`, else IDS_MACHINE_ID, else the private IPv4 rule (Go's
 * low 16 bits, refused when it does not fit `bits`, held as a host claim so two processes of
 * this host cannot both use it), else a host claim in IDS_CLAIM_DIR or the user's state
 * directory (see @ids/machine-file).
 *
 * @throws InvalidMachineIdError when --machine-id or IDS_MACHINE_ID is not an integer that fits
 * (a value the user typed); NoMachineIdError when no step produced one, with every step's reason.
 */
export async function chooseMachineId(options: MachineIdOptions): Promise<MachineIdChoice> {
  const { bits, flag } = options;
  const env = options.env ?? process.env;
  const steps: MachineIdStep[] = [];
  const given = (step: MachineIdStepName, machineId: number, detail: string): MachineIdChoice => {
    steps.push({ step, chosen: true, detail });
    return { machineId, source: machineId, step, steps };
  };

  if (flag !== undefined)
    return given('--machine-id', explicit(flag, '--machine-id', bits), `given: ${flag}`);
  steps.push({ step: '--machine-id', chosen: false, detail: 'not given' });

  const fromEnv = env.IDS_MACHINE_ID;
  if (fromEnv !== undefined && fromEnv !== '') {
    return given(
      'IDS_MACHINE_ID',
      explicit(fromEnv, 'IDS_MACHINE_ID', bits),
      `set in the environment: ${fromEnv}`,
    );
  }
  steps.push({ step: 'IDS_MACHINE_ID', chosen: false, detail: 'not set' });

  try {
    const auto = autoMachineId({
      bits,
      env: { ...env, IDS_MACHINE_ID: undefined },
      ...(options.interfaces ? { interfaces: options.interfaces } : {}),
    });
    steps.push(...fromChain(auto.trail));
    return { machineId: auto.id, source: auto.machineId, step: steps.at(-1)!.step, steps };
  } catch (error) {
    if (!(error instanceof AutoMachineIdError)) throw error;
    steps.push(...fromChain(error.trail));
    throw new NoMachineIdError(
      `no machine ID: ${steps.map((s) => `${s.step}: ${s.detail}`).join('; ')}. Give one with --machine-id N or IDS_MACHINE_ID=N (0 to ${2 ** bits - 1} for this layout), or a writable claim directory with IDS_CLAIM_DIR`,
      steps,
      { cause: error.cause },
    );
  }
}
