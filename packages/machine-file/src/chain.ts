// The `auto` chain: a list of named providers tried in order until one gives a machine ID,
// with a trail of what each did. The chain knows nothing of any particular source; the steps
// (the table of steps.ts, or a caller's own) do. It is itself a provider, the one the
// library's `machineId: 'auto'`, the CLI and the server all run.
import {
  IdsError,
  InvalidArgumentError,
  InvalidMachineIdError,
  type MachineIdClaim,
  type MachineIdProvider,
  type NamedMachineIdProvider,
  NoMachineIdHereError,
} from '@ids/engine';
import { checkInteger, errorText, idOf, received, releaseQuietly } from '@ids/engine/internal';
import { type AutoStepsOptions, autoSteps } from './steps.js';

/** What one step of the chain did: one entry of the trail. */
export interface AutoStep {
  /** Which step (its name). */
  readonly step: string;
  /** `used`: it gave the ID (the last step of a trail); `skipped`: nothing to try; `failed`: it tried and could not. */
  readonly outcome: 'used' | 'skipped' | 'failed';
  /** Why, in a sentence. */
  readonly detail: string;
}

/** The chain's answer: what to hand a generator, the ID, and how it was chosen. */
export interface AutoMachineId {
  /** A number or a claim (a HostClaim for the guarded steps), as the step gave it. */
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

/** The chain's options: its steps (the built-in ones by default, configured by the same options), the opt-ins, and where to report. */
export interface AutoMachineIdOptions extends AutoStepsOptions {
  /** The steps, in order. Default `autoSteps(options)`; add one of your own with `[mine, ...autoSteps(options)]`. */
  readonly steps?: readonly NamedMachineIdProvider[];
  /** Names of opt-in steps to run (`ec2`, `ipv6-ula`). Default: IDS_AUTO_OPT_IN from `env`, comma-separated. */
  readonly optIn?: readonly string[];
  /** Called with the chain's answer (its trail and `explain()`) before the ID is returned. */
  readonly onChosen?: (auto: AutoMachineId) => void;
}

function optedIn(options: AutoMachineIdOptions, steps: readonly NamedMachineIdProvider[]): Set<string> {
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

/** The lines of a trail, numbered, with each step's title. */
function explainTrail(trail: readonly AutoStep[], steps: readonly NamedMachineIdProvider[]): string {
  const titles = new Map(steps.map((s) => [s.name, s.title]));
  return trail.map((s, i) => `${i + 1}. ${titles.get(s.step)}: ${s.outcome} - ${s.detail}`).join('\n');
}

// Runs the steps from the first; synchronous until a step answers with a Promise, so the chain
// suits `new Sonyflake(...)` while no step is asynchronous, and `create()` always.
function runChain(options: AutoMachineIdOptions, bits: number): AutoMachineId | Promise<AutoMachineId> {
  const steps = options.steps ?? autoSteps(options);
  const chosen = optedIn(options, steps);
  const trail: AutoStep[] = [];
  const explain = () => explainTrail(trail, steps);
  const stop = (error: unknown, what = errorText(error)): never => {
    throw new AutoMachineIdError(
      `no machine ID: ${what}\n${explain()}`,
      trail,
      error === undefined ? {} : { cause: error },
    );
  };
  // A step's error: NoMachineIdHereError passes to the next step; any other stops the chain.
  const threw = (step: NamedMachineIdProvider, error: unknown, detail: string | undefined): undefined => {
    if (error instanceof NoMachineIdHereError) {
      trail.push({ step: step.name, outcome: error.outcome, detail: error.message });
      return undefined;
    }
    trail.push({ step: step.name, outcome: 'failed', detail: detail ?? errorText(error) });
    return stop(error);
  };
  const settle = (
    step: NamedMachineIdProvider,
    machineId: number | MachineIdClaim,
    detail: string | undefined,
  ): AutoMachineId => {
    const id = idOf(machineId);
    if (!Number.isInteger(id) || id < 0 || id >= 2 ** bits) {
      // A step's own bug or a too-wide source: refused here rather than by the generator later.
      void releaseQuietly(machineId);
      const max = 2 ** bits - 1;
      const error = new InvalidMachineIdError(
        `the ${step.name} step gave ${received(id)}; expected an integer from 0 to ${max}`,
      );
      return threw(step, error, undefined) as never;
    }
    trail.push({ step: step.name, outcome: 'used', detail: detail ?? `machine ID ${id}` });
    const auto: AutoMachineId = Object.freeze({
      machineId,
      id,
      step: step.name,
      title: step.title,
      trail,
      explain,
    });
    options.onChosen?.(auto);
    return auto;
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
      // What the step says of itself: how it chose, or what it tried before it failed.
      let detail: string | undefined;
      const note = (text: string) => {
        detail = text;
      };
      let answer: ReturnType<MachineIdProvider>;
      try {
        answer = step.provider({ bits, note });
      } catch (error) {
        threw(step, error, detail);
        continue;
      }
      if (answer instanceof Promise) {
        return answer.then(
          (value) => settle(step, value, detail),
          (error: unknown) => {
            threw(step, error, detail);
            return from(i + 1);
          },
        );
      }
      return settle(step, answer, detail);
    }
    return stop(undefined, 'no step of the chain gave one');
  };
  return from(0);
}

/**
 * The `auto` machine ID as a provider, `({ bits }) => ...`: the one chain the library
 * (`machineId: 'auto'`), the `ids` CLI and `ids-server` run. It tries `steps` (default
 * `autoSteps(options)`) in order until one gives an ID:
 *
 * 1. `explicit`: the `machineId` option, else `IDS_MACHINE_ID`;
 * 2. the stores configured, in this order: `redis` (IDS_MACHINE_ID_REDIS_URL, else
 *    IDS_REDIS_URL), `etcd` (IDS_ETCD_ENDPOINTS, comma-separated), `zookeeper`
 *    (IDS_ZOOKEEPER_CONNECT), or a flag of the caller's (`storeFlags`): a claim in that store,
 *    its package (@ids/machine-redis, -etcd, -zookeeper) imported only then;
 * 3. `kubernetes-ordinal`: in Kubernetes (KUBERNETES_SERVICE_HOST set), a StatefulSet pod's
 *    ordinal (IDS_POD_INDEX, else the number ending HOSTNAME, of the set IDS_STATEFULSET names
 *    when set) plus IDS_ORDINAL_OFFSET;
 * 4. `ec2` (opt-in): the instance's private IPv4 from the metadata service (IMDSv2);
 * 5. `private-ip`: Go's rule, the low bits of the host's private IPv4 address;
 * 6. `ipv6-ula` (opt-in): the interface identifier of a unique-local IPv6 address;
 * 7. `host-claim`: the lowest ID no live process of this host holds in the claim directory
 *    (`defaultClaimDir()`: IDS_CLAIM_DIR, else the user's state directory).
 *
 * IDs derived from the host (3 to 6) are held as a host claim of exactly that ID (see `guard`).
 * Opt-in steps run when named in `optIn` or IDS_AUTO_OPT_IN (`ec2,ipv6-ula`). The provider
 * answers synchronously while every step it runs does, so `new Sonyflake({ machineId:
 * autoMachineId() })` works without an opted-in `ec2`; `await Sonyflake.create(...)` runs every
 * step. `onChosen` receives the trail; a caller that passes `note` in the context receives the
 * used step's sentence, then the trail as numbered lines (`explain()`). Release a claim by closing the generator (or `claim.release()`); a normal
 * process exit releases it too.
 *
 * @throws (from the provider) InvalidArgumentError for `bits` outside 0..30 or an unknown
 * opt-in name; AutoMachineIdError with the trail and, as `cause`, the typed error that stopped
 * the chain: InvalidMachineIdError for a bad explicit ID (never skipped over),
 * HeldFileInUseError when another process of this host holds a derived ID, an opted-in source's
 * error (never a silent fallback), a configured store's error (StoreUnavailableError and
 * its family, MissingPackageError when its package is not installed), or the host claim's errors
 * (ClaimDirError, FileWriteError, NoFreeMachineIdError).
 */
export function autoMachineId(options: AutoMachineIdOptions = {}): MachineIdProvider {
  return ({ bits, note }) => {
    const report = (auto: AutoMachineId) => {
      // How it chose (the used step's own sentence), then the trail that led there.
      note?.(`${auto.trail.at(-1)?.detail}\n${auto.explain()}`, auto.trail);
      return auto.machineId;
    };
    const result = runChain(options, checkInteger(bits, 'bits', 0, 30));
    return result instanceof Promise ? result.then(report) : report(result);
  };
}
