// The built-in steps of the `auto` chain, in the order AUTO_STEPS runs them. Each is a small
// object: a later source (etcd, Redis) is one more such object in a caller's list, not an
// edit to the chain.
import { InvalidArgumentError, InvalidMachineIdError } from '@ids/engine';
import { errorText, received, releaseQuietly } from '@ids/engine/internal';
import {
  type AddressChoice,
  checkOffset,
  choosePrivateIPv4,
  chooseUniqueLocalIpv6,
  EC2_METADATA_ENDPOINT,
  type Ec2Options,
  ec2PrivateIPv4,
  ipv4MachineId,
  ipv6MachineId,
  kubernetesOrdinalMachineId,
  NoPodOrdinalError,
  podOrdinal,
} from '@ids/machine-ip';
import {
  type AutoChainStep,
  type AutoStepAnswer,
  type AutoStepContext,
  failed,
  skipped,
  used,
} from './auto-step.js';
import { claimHostMachineId, type HostClaim } from './claim.js';

// Digits only: Number() would also take "1e3", "0x10" and " 7 ".
function parseId(raw: string | number, from: string, max: number): number {
  const id = typeof raw === 'number' ? raw : /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(id) || id < 0 || id > max) {
    throw new InvalidMachineIdError(
      `${from}: expected an integer from 0 to ${max}, received ${received(raw)}`,
    );
  }
  return id;
}

/** How `explicitStep` reads its value. */
export interface ExplicitStepOptions {
  /** The step's name and title, and how the value is named in messages: `--machine-id`. */
  readonly name: string;
  /** The value as given (decimal text or a number); undefined: the step is skipped. Empty text is refused. */
  readonly value: string | number | undefined;
}

/**
 * A step that uses a value the user gave (a command-line flag, a setting), so a bad value stops
 * the chain with InvalidMachineIdError rather than being skipped over.
 */
export function explicitStep({ name, value }: ExplicitStepOptions): AutoChainStep {
  return {
    name,
    title: name,
    run: ({ bits }) => {
      if (value === undefined) return skipped('not given');
      return used(parseId(value, name, 2 ** bits - 1), `machine ID ${value} from ${name}`);
    },
  };
}

const explicit: AutoChainStep = {
  name: 'explicit',
  title: 'explicit ID',
  run: ({ bits, env, options }) => {
    const max = 2 ** bits - 1;
    if (options.machineId !== undefined) {
      const id = parseId(options.machineId, 'the machineId option', max);
      return used(id, `machine ID ${id} from the machineId option`);
    }
    const raw = env.IDS_MACHINE_ID;
    if (raw === undefined || raw.trim() === '')
      return skipped('no machineId option, and IDS_MACHINE_ID is not set');
    const id = parseId(raw, 'IDS_MACHINE_ID', max);
    return used(id, `machine ID ${id} from IDS_MACHINE_ID`);
  },
};

/**
 * `used(claim, detail())`, releasing the claim if working out the detail throws: a chain that
 * fails after taking a claim must not leave it held by nobody (the next run would skip it).
 */
function usedClaim(claim: HostClaim, detail: () => string): AutoStepAnswer {
  try {
    return used(claim, detail());
  } catch (error) {
    // Released at once (a host claim releases synchronously), so the next run can take the ID;
    // the error that stopped the chain is the one to report, not a failure to release.
    void releaseQuietly(claim);
    throw error;
  }
}

// An ID derived from the host is held as a host claim of exactly that ID (unless `guard` is
// false): a second process of the host deriving the same ID then fails instead of sharing it.
function hold(context: AutoStepContext, id: number, from: string, guard: boolean): AutoStepAnswer {
  if (!guard) return used(id, `${from}; not guarded by a host claim`);
  try {
    const claim = claimHostMachineId(context.bits, { ...context.claimOptions(), min: id, max: id });
    return usedClaim(claim, () => `${from}; held on this host: ${claim.describe()}`);
  } catch (error) {
    return failed(`${from}, but ${errorText(error)}`, error);
  }
}

const addressOptions = ({ options }: AutoStepContext) => ({
  ...(options.interfaces && { interfaces: options.interfaces }),
  ...(options.routes && { routes: options.routes }),
  ...(options.includeBridges !== undefined && { includeBridges: options.includeBridges }),
});

const on = (choice: AddressChoice) => `on ${choice.interface}: ${choice.why}`;

function readDigits(env: AutoStepContext['env'], name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d{1,10}$/.test(raw))
    throw new InvalidArgumentError(`${name}: expected a decimal integer, received ${received(raw)}`);
  return Number(raw);
}

const kubernetes: AutoChainStep = {
  name: 'kubernetes-ordinal',
  title: 'Kubernetes ordinal',
  run: (context) => {
    const { env, options, bits } = context;
    if (!env.KUBERNETES_SERVICE_HOST) return skipped('not in Kubernetes: KUBERNETES_SERVICE_HOST is not set');
    const offset =
      options.ordinalOffset === undefined
        ? checkOffset(readDigits(env, 'IDS_ORDINAL_OFFSET') ?? 0, 'IDS_ORDINAL_OFFSET')
        : checkOffset(options.ordinalOffset, 'ordinalOffset');
    let ordinal: ReturnType<typeof podOrdinal>;
    try {
      ordinal = podOrdinal({ env });
    } catch (error) {
      // A Deployment's or DaemonSet's pod has no ordinal: go on, saying why. A pod index or a
      // StatefulSet name the user set must be right.
      if (error instanceof NoPodOrdinalError && !env.IDS_POD_INDEX && !env.IDS_STATEFULSET)
        return skipped(errorText(error));
      throw error;
    }
    const id = kubernetesOrdinalMachineId({ env, offset })({ bits }) as number;
    const from = `machine ID ${id}: ordinal ${ordinal.ordinal} from the ${ordinal.from}, plus offset ${offset}`;
    return hold(context, id, from, options.guard ?? true);
  },
};

function ec2Options({ env, options }: AutoStepContext): Ec2Options {
  const timeoutMs = options.ec2?.timeoutMs ?? readDigits(env, 'IDS_EC2_TIMEOUT_MS');
  const endpoint = options.ec2?.endpoint ?? (env.IDS_EC2_ENDPOINT || undefined);
  return { ...(timeoutMs !== undefined && { timeoutMs }), ...(endpoint !== undefined && { endpoint }) };
}

const ec2: AutoChainStep = {
  name: 'ec2',
  title: 'EC2 metadata',
  optIn: true,
  run: async (context) => {
    const settings = ec2Options(context);
    const address = await ec2PrivateIPv4(settings);
    const id = ipv4MachineId(address, context.bits);
    const from = `machine ID ${id} from ${address}, the instance's private IPv4 (IMDSv2 at ${settings.endpoint ?? EC2_METADATA_ENDPOINT}; Go's rule)`;
    return hold(context, id, from, context.options.guard ?? true);
  },
};

const privateIp: AutoChainStep = {
  name: 'private-ip',
  title: 'private IPv4',
  run: (context) => {
    let choice: AddressChoice;
    let id: number;
    try {
      choice = choosePrivateIPv4(addressOptions(context));
      id = ipv4MachineId(choice.address, context.bits);
    } catch (error) {
      // No usable private address (or one too wide for the field): the next step may still give one.
      return failed(errorText(error));
    }
    const from = `machine ID ${id} from ${choice.address} (third octet * 256 + fourth, Go's rule) ${on(choice)}`;
    return hold(context, id, from, context.options.guardPrivateIp ?? context.options.guard ?? true);
  },
};

const ipv6: AutoChainStep = {
  name: 'ipv6-ula',
  title: 'unique-local IPv6',
  optIn: true,
  run: (context) => {
    const choice = chooseUniqueLocalIpv6(addressOptions(context));
    const id = ipv6MachineId(choice.address, context.bits);
    const from = `machine ID ${id} from ${choice.address} (its interface identifier) ${on(choice)}`;
    return hold(context, id, from, context.options.guard ?? true);
  },
};

const hostClaimStep: AutoChainStep = {
  name: 'host-claim',
  title: 'host claim',
  run: (context) => {
    const options = context.claimOptions();
    const claim = claimHostMachineId(context.bits, options);
    return usedClaim(
      claim,
      () =>
        `machine ID ${claim.machineId}, unique among the processes of this host using ${options.dir}: ${claim.describe()}`,
    );
  },
};

/**
 * The default chain, in order: `explicit` (the machineId option, else IDS_MACHINE_ID),
 * `kubernetes-ordinal` (in Kubernetes, a StatefulSet pod's ordinal), `ec2` (opt-in: the
 * instance's private IPv4 from IMDSv2), `private-ip` (Go's rule), `ipv6-ula` (opt-in: a
 * unique-local IPv6 address), `host-claim` (the lowest ID free among this host's processes).
 */
export const AUTO_STEPS: readonly AutoChainStep[] = Object.freeze([
  explicit,
  kubernetes,
  ec2,
  privateIp,
  ipv6,
  hostClaimStep,
]);
