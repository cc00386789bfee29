import { IdsError, InvalidArgumentError, InvalidMachineIdError } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { type InterfaceSource, privateIPv4, privateIpMachineId } from '@ids/machine-ip';
import { claimHostMachineId, type HostClaim, type HostClaimOptions } from './claim.js';
import { defaultClaimDir, type Env } from './dirs.js';
import { describe } from './files.js';

/** The steps of the `auto` chain, in order. */
export type AutoStepName = 'explicit' | 'private-ip' | 'host-claim';

/** What one step of the chain did. */
export interface AutoStep {
  /** Which step. */
  readonly step: AutoStepName;
  /** `used`: it gave the ID (the last step of a trail); `skipped`: nothing to try; `failed`: it tried and could not. */
  readonly outcome: 'used' | 'skipped' | 'failed';
  /** Why, in a sentence. */
  readonly detail: string;
}

/** What `autoMachineId` works from; every option has a default, so `{}` is the usual call. */
export interface AutoMachineIdOptions {
  /** Bits of the layout's machine field. Default 16 (Sonyflake). */
  readonly bits?: number;
  /** An explicit machine ID; wins over everything. Default: IDS_MACHINE_ID from `env`, else none. */
  readonly machineId?: number;
  /** Where IDS_MACHINE_ID and IDS_CLAIM_DIR are read. Default: process.env. */
  readonly env?: Env;
  /** The interface list for the private-IPv4 step (tests pass their own). Default: os.networkInterfaces. */
  readonly interfaces?: InterfaceSource;
  /**
   * Hold the private-IPv4 machine ID as a host claim too, so that a second process on this host
   * deriving the same ID fails instead of issuing duplicates, and a restart with the clock behind
   * cannot reissue. Default true.
   */
  readonly guardPrivateIp?: boolean;
  /** Options of the host claims (directory, clock, range, seams). `dir` defaults to `defaultClaimDir(env)`. */
  readonly claim?: HostClaimOptions;
}

/** The chain's answer: what to hand a generator, the ID, and how it was chosen. */
export interface AutoMachineId {
  /** A number (explicit, unguarded IP) or a HostClaim: pass it as the generator's `machineId`. */
  readonly machineId: number | HostClaim;
  /** The machine ID itself. */
  readonly id: number;
  /** The step that gave it. */
  readonly step: AutoStepName;
  /** Every step tried, in order, with why it was used, skipped or failed. */
  readonly trail: readonly AutoStep[];
  /** The trail as numbered lines, for a person. */
  explain(): string;
}

/** No step of the chain gave a machine ID; `trail` says what each did, `cause` holds the last failure. */
export class AutoMachineIdError extends IdsError {
  readonly code = 'ERR_IDS_AUTO_MACHINE_ID';
  override readonly name = 'AutoMachineIdError';
  constructor(
    message: string,
    /** Every step tried, in order; the last one failed. */
    readonly trail: readonly AutoStep[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const TITLES: Record<AutoStepName, string> = {
  explicit: 'explicit ID',
  'private-ip': 'private IPv4',
  'host-claim': 'host claim',
};

function explainTrail(trail: readonly AutoStep[]): string {
  return trail.map((s, i) => `${i + 1}. ${TITLES[s.step]}: ${s.outcome} - ${s.detail}`).join('\n');
}

function explicitId(
  options: AutoMachineIdOptions,
  env: Env,
  max: number,
): { id: number; from: string } | undefined {
  const check = (id: number, from: string, raw: unknown) => {
    if (!Number.isInteger(id) || id < 0 || id > max) {
      throw new InvalidMachineIdError(
        `${from}: expected an integer from 0 to ${max}, received ${received(raw)}`,
      );
    }
    return { id, from };
  };
  if (options.machineId !== undefined)
    return check(options.machineId, 'the machineId option', options.machineId);
  const raw = env.IDS_MACHINE_ID;
  if (raw === undefined || raw.trim() === '') return undefined;
  // Digits only: Number() would also take "1e3", "0x10" and " 7 ".
  return check(/^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN, 'IDS_MACHINE_ID', raw);
}

/**
 * The `auto` machine ID, for the CLI, `npm start` and the examples:
 *
 * 1. an explicit ID: the `machineId` option, else `IDS_MACHINE_ID`;
 * 2. else Go's rule, the low bits of the host's private IPv4 address, held as a host claim
 *    of exactly that ID (see `guardPrivateIp`);
 * 3. else a host claim: the lowest ID no live process of this host holds in the claim
 *    directory (`defaultClaimDir()`: IDS_CLAIM_DIR, else the user's state directory).
 *
 * Synchronous, so it suits `new Sonyflake({ machineId: auto.machineId })`. Release a claim by
 * closing the generator (or `claim.release()`); a normal process exit releases it too.
 *
 * @throws InvalidArgumentError for `bits` outside 0..30.
 * @throws AutoMachineIdError with the trail and, as `cause`, the typed error that stopped the
 * chain: InvalidMachineIdError for a bad explicit ID (never skipped over), MachineIdHeldError
 * when another process of this host holds the private-IPv4 ID, or the host claim's errors
 * (ClaimDirError, FileWriteError, NoFreeMachineIdError).
 */
export function autoMachineId(options: AutoMachineIdOptions = {}): AutoMachineId {
  const env = options.env ?? process.env;
  const bits = options.bits ?? 16;
  if (!Number.isInteger(bits) || bits < 0 || bits > 30) {
    throw new InvalidArgumentError(`bits: expected an integer from 0 to 30, received ${received(bits)}`);
  }
  const trail: AutoStep[] = [];
  const fail = (error: unknown): never => {
    throw new AutoMachineIdError(`no machine ID: ${describe(error)}\n${explainTrail(trail)}`, trail, {
      cause: error,
    });
  };
  const done = (machineId: number | HostClaim, step: AutoStepName, detail: string): AutoMachineId => {
    trail.push({ step, outcome: 'used', detail });
    const id = typeof machineId === 'number' ? machineId : machineId.machineId;
    return Object.freeze({ machineId, id, step, trail, explain: () => explainTrail(trail) });
  };
  // Only the claim steps need the directory: an explicit ID works where no home directory exists.
  const claimOptions = (): HostClaimOptions => ({
    ...options.claim,
    dir: options.claim?.dir ?? defaultDir(env, fail),
  });

  let explicit: ReturnType<typeof explicitId>;
  try {
    explicit = explicitId(options, env, 2 ** bits - 1);
  } catch (error) {
    trail.push({ step: 'explicit', outcome: 'failed', detail: describe(error) });
    return fail(error);
  }
  if (explicit) return done(explicit.id, 'explicit', `machine ID ${explicit.id} from ${explicit.from}`);
  trail.push({
    step: 'explicit',
    outcome: 'skipped',
    detail: 'no machineId option, and IDS_MACHINE_ID is not set',
  });

  let ipId: number | undefined;
  try {
    ipId = privateIpMachineId({ interfaces: options.interfaces })({ bits }) as number;
  } catch (error) {
    trail.push({ step: 'private-ip', outcome: 'failed', detail: describe(error) });
  }
  if (ipId !== undefined) {
    const address = privateIPv4(options.interfaces);
    const from = `machine ID ${ipId} from ${address} (third octet * 256 + fourth, Go's rule)`;
    if (options.guardPrivateIp === false)
      return done(ipId, 'private-ip', `${from}; not guarded by a host claim`);
    try {
      const claim = claimHostMachineId(bits, { ...claimOptions(), min: ipId, max: ipId });
      return done(claim, 'private-ip', `${from}; held on this host: ${claim.describe()}`);
    } catch (error) {
      trail.push({ step: 'private-ip', outcome: 'failed', detail: `${from}, but ${describe(error)}` });
      return fail(error);
    }
  }

  const hostOptions = claimOptions();
  try {
    const claim = claimHostMachineId(bits, hostOptions);
    return done(
      claim,
      'host-claim',
      `machine ID ${claim.machineId}, unique among the processes of this host using ${hostOptions.dir}: ${claim.describe()}`,
    );
  } catch (error) {
    trail.push({ step: 'host-claim', outcome: 'failed', detail: describe(error) });
    return fail(error);
  }
}

function defaultDir(env: Env, fail: (error: unknown) => never): string {
  try {
    return defaultClaimDir(env);
  } catch (error) {
    return fail(error);
  }
}
