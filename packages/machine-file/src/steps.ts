// The `auto` chain's table of steps, in the order the chain tries them: the explicit ID, the
// stores configured (one row per store of the engine's store table, see store-steps.ts), then
// what the host says (Kubernetes ordinal, EC2, private IPv4, unique-local IPv6) and the host
// claim. Each step is a named provider (the engine's NamedMachineIdProvider); the library's
// `machineId: 'auto'`, the CLI and the server all run this one table, and ids-server's named
// sources are the chain restricted to one of its rows.
import {
  InvalidArgumentError,
  type MachineIdClaim,
  type MachineIdContext,
  type MachineIdProvider,
  type NamedMachineIdProvider,
  NoMachineIdHereError,
} from '@ids/engine';
import { envMachineIds, errorText, parseMachineIds, received, releaseQuietly } from '@ids/engine/internal';
import {
  type AddressChoice,
  type AddressOptions,
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
import { claimHostMachineId, type HostClaim, type HostClaimOptions } from './claim.js';
import { defaultClaimDir, type Env } from './dirs.js';
import { type StoreStepsOptions, storeRows, storeSteps } from './store-steps.js';

/** One row of the chain's table. */
export interface AutoStepRow {
  /** The step's name, in a trail, in IDS_AUTO_OPT_IN, and as an ids-server source: `private-ip`. */
  readonly name: string;
  /** Its name for a person: `private IPv4`. */
  readonly title: string;
  /** What it gives, in a line: for a list of the steps (ids-server's `--help`). */
  readonly summary: string;
  /** Run only when named in IDS_AUTO_OPT_IN (or `optIn`). */
  readonly optIn?: boolean;
  /** A store's row: the variables that put it in the chain, the first one set giving where it is. */
  readonly env?: readonly string[];
  /** A store's row: the package that claims there, imported only when the step runs. */
  readonly package?: string;
}

/** The rows after the stores: what the host says, then the host claim. */
const HOST_ROWS: readonly AutoStepRow[] = [
  {
    name: 'kubernetes-ordinal',
    title: 'Kubernetes ordinal',
    summary: "in Kubernetes, a StatefulSet pod's ordinal plus IDS_ORDINAL_OFFSET, held as a host claim",
  },
  {
    name: 'ec2',
    title: 'EC2 metadata',
    summary: "the instance's private IPv4 from IMDSv2, Go's rule, held as a host claim (opt-in)",
    optIn: true,
  },
  {
    name: 'private-ip',
    title: 'private IPv4',
    summary: "Go's rule: the low bits of the host's private IPv4 address, held as a host claim",
  },
  {
    name: 'ipv6-ula',
    title: 'unique-local IPv6',
    summary: 'the interface identifier of an fc00::/7 address, held as a host claim (opt-in)',
    optIn: true,
  },
  {
    name: 'host-claim',
    title: 'host claim',
    summary: 'the lowest machine ID no live process of this host holds in the claim directory',
  },
];

/**
 * The chain's table: every step it can have, in order, whether configured here or not (a
 * store's step is in a chain only where one of its variables is set, or a flag gives it).
 */
export function autoStepTable(): AutoStepRow[] {
  const explicit = {
    name: 'explicit',
    title: 'explicit ID',
    summary: 'the machineId option, else IDS_MACHINE_ID',
  };
  return [explicit, ...storeRows(), ...HOST_ROWS];
}

/** What the steps work from; every option has a default, so `{}` is the usual call. */
export interface AutoStepsOptions extends StoreStepsOptions {
  /** An explicit machine ID; wins over everything. Default: IDS_MACHINE_ID from `env`, else none. */
  readonly machineId?: number;
  /** Where IDS_* variables, HOSTNAME and KUBERNETES_SERVICE_HOST are read. Default: process.env. */
  readonly env?: Env;
  /** The interface list for the address steps (tests pass their own). Default: os.networkInterfaces. */
  readonly interfaces?: AddressOptions['interfaces'];
  /** The route tables that break a tie between several addresses. Default: /proc/net/route and /proc/net/ipv6_route. */
  readonly routes?: AddressOptions['routes'];
  /** Let the address steps take addresses of virtual bridges (docker0, cni0, ...). Default false. */
  readonly includeBridges?: boolean;
  /** The EC2 metadata service (opt-in step `ec2`). Default: IDS_EC2_ENDPOINT and IDS_EC2_TIMEOUT_MS from `env`, else the real service with 1000 ms. */
  readonly ec2?: Ec2Options;
  /** The StatefulSet ordinal's offset. Default: IDS_ORDINAL_OFFSET from `env`, else 0. */
  readonly ordinalOffset?: number;
  /**
   * Hold an ID derived from the host (address, ordinal) as a host claim of exactly that ID, so
   * that a second process of this host deriving the same ID fails instead of issuing duplicates,
   * and a restart with the clock behind cannot reissue. Default true.
   */
  readonly guard?: boolean;
  /** The older name of `guard`, for the private IPv4 step only. Default: `guard`. */
  readonly guardPrivateIp?: boolean;
  /** Options of the host claims (directory, clock, range, seams). `dir` defaults to `defaultClaimDir(env)`. */
  readonly claim?: HostClaimOptions;
}

const skip = (detail: string): never => {
  throw new NoMachineIdHereError(detail, 'skipped');
};

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
export function explicitStep({ name, value }: ExplicitStepOptions): NamedMachineIdProvider {
  return {
    name,
    title: name,
    provider: ({ bits, note }) => {
      if (value === undefined) return skip('not given');
      const [id] = parseMachineIds(value, name, { max: 2 ** bits - 1 }) as [number];
      note?.(`machine ID ${value} from ${name}`);
      return id;
    },
  };
}

/** A host claim's ID, noted with `detail()`; released if working out the detail throws, so a failed chain leaves no ID held. */
function noted(claim: HostClaim, note: MachineIdContext['note'], detail: () => string): HostClaim {
  try {
    note?.(detail());
    return claim;
  } catch (error) {
    // Released at once (a host claim releases synchronously), so the next run can take the ID;
    // the error that stopped the chain is the one to report, not a failure to release.
    void releaseQuietly(claim);
    throw error;
  }
}

function readDigits(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d{1,10}$/.test(raw))
    throw new InvalidArgumentError(`${name}: expected a decimal integer, received ${received(raw)}`);
  return Number(raw);
}

const on = (choice: AddressChoice) => `on ${choice.interface}: ${choice.why}`;

/**
 * The chain's steps for these options, in the table's order: `explicit` (the machineId option,
 * else IDS_MACHINE_ID), the stores configured (`redis`: IDS_MACHINE_ID_REDIS_URL or
 * IDS_REDIS_URL; `etcd`: IDS_ETCD_ENDPOINTS; `zookeeper`: IDS_ZOOKEEPER_CONNECT; or
 * `storeFlags`), `kubernetes-ordinal` (in Kubernetes, a StatefulSet pod's ordinal), `ec2`
 * (opt-in: the instance's private IPv4 from IMDSv2), `private-ip` (Go's rule), `ipv6-ula`
 * (opt-in: a unique-local IPv6 address), `host-claim` (the lowest ID free among this host's
 * processes). IDs derived from the host are held as a host claim of exactly that ID (see `guard`).
 */
export function autoSteps(options: AutoStepsOptions = {}): NamedMachineIdProvider[] {
  const env = options.env ?? process.env;
  const guard = options.guard ?? true;
  // Only the claim steps need the directory: an explicit ID works where no home directory exists.
  const claimOptions = (): HostClaimOptions => ({
    ...options.claim,
    dir: options.claim?.dir ?? defaultClaimDir(env),
  });
  const addressOptions = {
    ...(options.interfaces && { interfaces: options.interfaces }),
    ...(options.routes && { routes: options.routes }),
    ...(options.includeBridges !== undefined && { includeBridges: options.includeBridges }),
  };

  // An ID derived from the host is held as a host claim of exactly that ID (unless `guard` is
  // false): a second process of the host deriving the same ID then fails instead of sharing it.
  const hold = (
    { bits, note }: MachineIdContext,
    id: number,
    from: string,
    guarded: boolean,
  ): number | MachineIdClaim => {
    if (!guarded) {
      note?.(`${from}; not guarded by a host claim`);
      return id;
    }
    let claim: HostClaim;
    try {
      claim = claimHostMachineId(bits, { ...claimOptions(), min: id, max: id });
    } catch (error) {
      note?.(`${from}, but ${errorText(error)}`);
      throw error;
    }
    return noted(claim, note, () => `${from}; held on this host: ${claim.describe()}`);
  };

  const explicit: MachineIdProvider = ({ bits, note }) => {
    const max = 2 ** bits - 1;
    if (options.machineId !== undefined) {
      const [id] = parseMachineIds(options.machineId, 'the machineId option', { max });
      note?.(`machine ID ${id} from the machineId option`);
      return id as number;
    }
    const [id] = envMachineIds(env, { max }) ?? skip('no machineId option, and IDS_MACHINE_ID is not set');
    note?.(`machine ID ${id} from IDS_MACHINE_ID`);
    return id as number;
  };

  const kubernetes: MachineIdProvider = (context) => {
    if (!env.KUBERNETES_SERVICE_HOST) return skip('not in Kubernetes: KUBERNETES_SERVICE_HOST is not set');
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
        return skip(errorText(error));
      throw error;
    }
    const id = kubernetesOrdinalMachineId({ env, offset })({ bits: context.bits }) as number;
    const from = `machine ID ${id}: ordinal ${ordinal.ordinal} from the ${ordinal.from}, plus offset ${offset}`;
    return hold(context, id, from, guard);
  };

  const ec2Settings = (): Ec2Options => {
    const timeoutMs = options.ec2?.timeoutMs ?? readDigits(env, 'IDS_EC2_TIMEOUT_MS');
    const endpoint = options.ec2?.endpoint ?? (env.IDS_EC2_ENDPOINT || undefined);
    return { ...(timeoutMs !== undefined && { timeoutMs }), ...(endpoint !== undefined && { endpoint }) };
  };

  const ec2: MachineIdProvider = async (context) => {
    const settings = ec2Settings();
    const address = await ec2PrivateIPv4(settings);
    const id = ipv4MachineId(address, context.bits);
    const from = `machine ID ${id} from ${address}, the instance's private IPv4 (IMDSv2 at ${settings.endpoint ?? EC2_METADATA_ENDPOINT}; Go's rule)`;
    return hold(context, id, from, guard);
  };

  const privateIp: MachineIdProvider = (context) => {
    let choice: AddressChoice;
    let id: number;
    try {
      choice = choosePrivateIPv4(addressOptions);
      id = ipv4MachineId(choice.address, context.bits);
    } catch (error) {
      // No usable private address (or one too wide for the field): the next step may still give one.
      throw new NoMachineIdHereError(errorText(error), 'failed', { cause: error });
    }
    const from = `machine ID ${id} from ${choice.address} (third octet * 256 + fourth, Go's rule) ${on(choice)}`;
    return hold(context, id, from, options.guardPrivateIp ?? guard);
  };

  const ipv6: MachineIdProvider = (context) => {
    const choice = chooseUniqueLocalIpv6(addressOptions);
    const id = ipv6MachineId(choice.address, context.bits);
    const from = `machine ID ${id} from ${choice.address} (its interface identifier) ${on(choice)}`;
    return hold(context, id, from, guard);
  };

  const hostClaimStep: MachineIdProvider = ({ bits, note }) => {
    const claimSettings = claimOptions();
    const claim = claimHostMachineId(bits, claimSettings);
    return noted(
      claim,
      note,
      () =>
        `machine ID ${claim.machineId}, unique among the processes of this host using ${claimSettings.dir}: ${claim.describe()}`,
    );
  };

  const providers: Readonly<Record<string, MachineIdProvider>> = {
    explicit,
    'kubernetes-ordinal': kubernetes,
    ec2,
    'private-ip': privateIp,
    'ipv6-ula': ipv6,
    'host-claim': hostClaimStep,
  };
  const stores = storeSteps(options);
  return autoStepTable().flatMap(({ name, title, optIn, env: configuredBy }): NamedMachineIdProvider[] =>
    configuredBy
      ? stores.filter((step) => step.name === name)
      : [{ name, title, ...(optIn && { optIn }), provider: providers[name] as MachineIdProvider }],
  );
}
