// The `auto` chain: runs a list of named steps in order until one gives a machine ID, and keeps
// a trail of what each did. The chain knows nothing of any particular source; the steps
// (auto-steps.ts, or a caller's own) do.
import {
  AsyncSettingError,
  IdsError,
  InvalidArgumentError,
  InvalidMachineIdError,
  isClaim,
  type MachineIdClaim,
  type MachineIdProvider,
} from '@ids/engine';
import { checkInteger, errorText, idOf, received, releaseQuietly } from '@ids/engine/internal';
import type {
  AutoChainStep,
  AutoMachineIdOptions,
  AutoStep,
  AutoStepAnswer,
  AutoStepContext,
} from './auto-step.js';
import { AUTO_STEPS } from './auto-steps.js';
import type { HostClaimOptions } from './claim.js';
import { defaultClaimDir } from './dirs.js';

/** The chain's answer: what to hand a generator, the ID, and how it was chosen. */
export interface AutoMachineId {
  /** A number or a claim (a HostClaim for the guarded steps): pass it as the generator's `machineId`. */
  readonly machineId: number | MachineIdClaim;
  /** The machine ID itself. */
  readonly id: number;
  /** The name of the step that gave it. */
  readonly step: string;
  /** That step's title, for a person (`private IPv4`). */
  readonly title: string;
  /** Every step tried, in order, with why it was used, skipped or failed. */
  readonly trail: readonly AutoStep[];
  /** The trail as numbered lines, for a person. */
  explain(): string;
}

/** No step of the chain gave a machine ID; `trail` says what each did, `cause` holds the error that stopped it. */
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

function checkBits(bits: unknown): number {
  return checkInteger(bits, 'bits', 0, 30);
}

function optedIn(options: AutoMachineIdOptions, steps: readonly AutoChainStep[]): Set<string> {
  const env = options.env ?? process.env;
  const names =
    options.optIn ??
    (env.IDS_AUTO_OPT_IN ?? '')
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
  const known = steps.filter((s) => s.optIn).map((s) => s.name);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) {
    throw new InvalidArgumentError(
      `${options.optIn ? 'optIn' : 'IDS_AUTO_OPT_IN'}: expected names of opt-in steps (${known.join(', ') || 'none in this chain'}), received ${received(unknown.join(','))}`,
    );
  }
  return new Set(names);
}

const isPromise = (value: unknown): value is Promise<AutoStepAnswer> => value instanceof Promise;

// Runs the steps from the first; synchronous until a step answers with a Promise, which the
// synchronous form refuses and the asynchronous forms wait for.
function runChain(
  options: AutoMachineIdOptions,
  bits: number,
  sync: boolean,
): AutoMachineId | Promise<AutoMachineId> {
  const steps = options.steps ?? AUTO_STEPS;
  const chosen = optedIn(options, steps);
  const env = options.env ?? process.env;
  const trail: AutoStep[] = [];
  const titles = new Map(steps.map((s) => [s.name, s.title]));
  const explain = () =>
    trail.map((s, i) => `${i + 1}. ${titles.get(s.step)}: ${s.outcome} - ${s.detail}`).join('\n');
  const stop = (error: unknown, what = errorText(error)): never => {
    throw new AutoMachineIdError(
      `no machine ID: ${what}\n${explain()}`,
      trail,
      error === undefined ? {} : { cause: error },
    );
  };
  const context: AutoStepContext = {
    bits,
    env,
    options,
    // Only the claim steps need the directory: an explicit ID works where no home directory exists.
    claimOptions: (): HostClaimOptions => ({
      ...options.claim,
      dir: options.claim?.dir ?? defaultClaimDir(env),
    }),
  };
  const threw = (step: AutoChainStep, error: unknown): never => {
    trail.push({ step: step.name, outcome: 'failed', detail: errorText(error) });
    return stop(error);
  };
  const settle = (step: AutoChainStep, answer: AutoStepAnswer): AutoMachineId | undefined => {
    if (answer.outcome !== 'used') {
      trail.push({ step: step.name, outcome: answer.outcome, detail: answer.detail });
      return answer.outcome === 'failed' && answer.stop !== undefined ? stop(answer.stop) : undefined;
    }
    const { machineId } = answer;
    const id = idOf(machineId);
    if (!Number.isInteger(id) || id < 0 || id >= 2 ** bits) {
      // A step's own bug or a too-wide source: refused here rather than by the generator later.
      void releaseQuietly(machineId);
      const max = 2 ** bits - 1;
      return threw(
        step,
        new InvalidMachineIdError(
          `the ${step.name} step gave ${received(id)}; expected an integer from 0 to ${max}`,
        ),
      );
    }
    trail.push({ step: step.name, outcome: 'used', detail: answer.detail });
    return Object.freeze({ machineId, id, step: step.name, title: step.title, trail, explain });
  };
  const from = (first: number): AutoMachineId | Promise<AutoMachineId> => {
    for (let i = first; i < steps.length; i++) {
      const step = steps[i]!;
      if (step.optIn && !chosen.has(step.name)) {
        trail.push({
          step: step.name,
          outcome: 'skipped',
          detail: `opt-in, and IDS_AUTO_OPT_IN does not name ${step.name}`,
        });
        continue;
      }
      let answer: AutoStepAnswer | Promise<AutoStepAnswer>;
      try {
        answer = step.run(context);
      } catch (error) {
        return threw(step, error);
      }
      if (isPromise(answer)) {
        if (sync) {
          // Not waited for: a claim it may yet give must not stay held.
          answer.then(
            (a) => a.outcome === 'used' && isClaim(a.machineId) && a.machineId.release(),
            () => undefined,
          );
          return threw(
            step,
            new AsyncSettingError(
              `the ${step.name} step answers asynchronously; use autoMachineIdAsync() or autoMachineIdProvider() with create()`,
            ),
          );
        }
        return answer.then(
          (settled) => settle(step, settled) ?? from(i + 1),
          (error: unknown) => threw(step, error),
        );
      }
      const done = settle(step, answer);
      if (done) return done;
    }
    return stop(undefined, 'no step of the chain gave one');
  };
  return from(0);
}

/**
 * The `auto` machine ID, for the CLI, `npm start` and the examples. Runs `steps` (default
 * AUTO_STEPS) in order until one gives an ID:
 *
 * 1. `explicit`: the `machineId` option, else `IDS_MACHINE_ID`;
 * 2. `kubernetes-ordinal`: in Kubernetes (KUBERNETES_SERVICE_HOST set), a StatefulSet pod's
 *    ordinal (IDS_POD_INDEX, else the number ending HOSTNAME, of the set IDS_STATEFULSET names
 *    when set) plus IDS_ORDINAL_OFFSET;
 * 3. `ec2` (opt-in): the instance's private IPv4 from the metadata service (IMDSv2);
 * 4. `private-ip`: Go's rule, the low bits of the host's private IPv4 address;
 * 5. `ipv6-ula` (opt-in): the interface identifier of a unique-local IPv6 address;
 * 6. `host-claim`: the lowest ID no live process of this host holds in the claim directory
 *    (`defaultClaimDir()`: IDS_CLAIM_DIR, else the user's state directory).
 *
 * IDs derived from the host (2 to 5) are held as a host claim of exactly that ID (see `guard`).
 * Opt-in steps run when named in `optIn` or IDS_AUTO_OPT_IN (`ec2,ipv6-ula`). Synchronous, so it
 * suits `new Sonyflake({ machineId: auto.machineId })`; with the `ec2` step opted in, use
 * `autoMachineIdAsync` or `autoMachineIdProvider`. Release a claim by closing the generator (or
 * `claim.release()`); a normal process exit releases it too.
 *
 * @throws InvalidArgumentError for `bits` outside 0..30 or an unknown opt-in name.
 * @throws AutoMachineIdError with the trail and, as `cause`, the typed error that stopped the
 * chain: InvalidMachineIdError for a bad explicit ID (never skipped over), MachineIdHeldError
 * when another process of this host holds a derived ID, an opted-in source's error (never a
 * silent fallback), AsyncSettingError for an asynchronous step, or the host claim's errors
 * (ClaimDirError, FileWriteError, NoFreeMachineIdError).
 */
export function autoMachineId(options: AutoMachineIdOptions = {}): AutoMachineId {
  return runChain(options, checkBits(options.bits ?? 16), true) as AutoMachineId;
}

/** `autoMachineId` for chains with asynchronous steps (`ec2`): the same steps, trail and errors, as a Promise. */
export async function autoMachineIdAsync(options: AutoMachineIdOptions = {}): Promise<AutoMachineId> {
  return runChain(options, checkBits(options.bits ?? 16), false);
}

/** The provider form's options: the chain's, without `bits` (the layout gives it), and where to report the result. */
export interface AutoMachineIdProviderOptions extends Omit<AutoMachineIdOptions, 'bits'> {
  /** Called with the chain's answer (its trail and `explain()`) before the generator takes the ID. */
  readonly onChosen?: (auto: AutoMachineId) => void;
}

/**
 * The chain as a provider, `({ bits }) => ...`, so the width comes from the generator's layout:
 * `Sonyflake.create({ machineId: autoMachineIdProvider() })`. Synchronous unless a step is
 * asynchronous, so `new Sonyflake(...)` takes it too when `ec2` is not opted in.
 * @throws (from the provider) what `autoMachineId` throws.
 */
export function autoMachineIdProvider(options: AutoMachineIdProviderOptions = {}): MachineIdProvider {
  return ({ bits }) => {
    const report = (auto: AutoMachineId) => {
      options.onChosen?.(auto);
      return auto.machineId;
    };
    const result = runChain(options, checkBits(bits), false);
    return result instanceof Promise ? result.then(report) : report(result);
  };
}
