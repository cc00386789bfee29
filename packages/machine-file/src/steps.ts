// The built-in steps of the `auto` chain, each a named provider (the engine's
// NamedMachineIdProvider), in the order `autoSteps` lists them. A later source (etcd, Redis) is
// one more named provider in the list, passed as a store, not an edit to the chain.
import {
  InvalidArgumentError,
  InvalidMachineIdError,
  type MachineIdClaim,
  type MachineIdContext,
  type NamedMachineIdProvider,
  NoMachineIdHereError,
} from '@ids/engine';
import { errorText, received, releaseQuietly } from '@ids/engine/internal';
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

/** What the built-in steps work from; every option has a default, so `{}` is the usual call. */
export interface AutoStepsOptions {
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
  /**
   * Steps for the stores the caller is configured with (Redis, etcd), run after the explicit ID
   * and before anything derived from the host, so a fleet on a store never mixes in a
   * host-derived ID. Default none.
   */
  readonly stores?: readonly NamedMachineIdProvider[];
}

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
      const id = parseId(value, name, 2 ** bits - 1);
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
 * The built-in steps, in order: `explicit` (the machineId option, else IDS_MACHINE_ID), the
 * `stores` given, `kubernetes-ordinal` (in Kubernetes, a StatefulSet pod's ordinal), `ec2`
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

  const explicit: NamedMachineIdProvider = {
    name: 'explicit',
    title: 'explicit ID',
    provider: ({ bits, note }) => {
      const max = 2 ** bits - 1;
      if (options.machineId !== undefined) {
        const id = parseId(options.machineId, 'the machineId option', max);
        note?.(`machine ID ${id} from the machineId option`);
        return id;
      }
      const raw = env.IDS_MACHINE_ID;
      if (raw === undefined || raw.trim() === '')
        return skip('no machineId option, and IDS_MACHINE_ID is not set');
      const id = parseId(raw, 'IDS_MACHINE_ID', max);
      note?.(`machine ID ${id} from IDS_MACHINE_ID`);
      return id;
    },
  };

  const kubernetes: NamedMachineIdProvider = {
    name: 'kubernetes-ordinal',
    title: 'Kubernetes ordinal',
    provider: (context) => {
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
    },
  };

  const ec2Settings = (): Ec2Options => {
    const timeoutMs = options.ec2?.timeoutMs ?? readDigits(env, 'IDS_EC2_TIMEOUT_MS');
    const endpoint = options.ec2?.endpoint ?? (env.IDS_EC2_ENDPOINT || undefined);
    return { ...(timeoutMs !== undefined && { timeoutMs }), ...(endpoint !== undefined && { endpoint }) };
  };

  const ec2: NamedMachineIdProvider = {
    name: 'ec2',
    title: 'EC2 metadata',
    optIn: true,
    provider: async (context) => {
      const settings = ec2Settings();
      const address = await ec2PrivateIPv4(settings);
      const id = ipv4MachineId(address, context.bits);
      const from = `machine ID ${id} from ${address}, the instance's private IPv4 (IMDSv2 at ${settings.endpoint ?? EC2_METADATA_ENDPOINT}; Go's rule)`;
      return hold(context, id, from, guard);
    },
  };

  const privateIp: NamedMachineIdProvider = {
    name: 'private-ip',
    title: 'private IPv4',
    provider: (context) => {
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
    },
  };

  const ipv6: NamedMachineIdProvider = {
    name: 'ipv6-ula',
    title: 'unique-local IPv6',
    optIn: true,
    provider: (context) => {
      const choice = chooseUniqueLocalIpv6(addressOptions);
      const id = ipv6MachineId(choice.address, context.bits);
      const from = `machine ID ${id} from ${choice.address} (its interface identifier) ${on(choice)}`;
      return hold(context, id, from, guard);
    },
  };

  const hostClaimStep: NamedMachineIdProvider = {
    name: 'host-claim',
    title: 'host claim',
    provider: ({ bits, note }) => {
      const claimSettings = claimOptions();
      const claim = claimHostMachineId(bits, claimSettings);
      return noted(
        claim,
        note,
        () =>
          `machine ID ${claim.machineId}, unique among the processes of this host using ${claimSettings.dir}: ${claim.describe()}`,
      );
    },
  };

  return [explicit, ...(options.stores ?? []), kubernetes, ec2, privateIp, ipv6, hostClaimStep];
}
