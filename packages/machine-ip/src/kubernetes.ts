// Machine IDs for Kubernetes StatefulSets: pod `web-3` is ordinal 3, stable across restarts
// and unique within its set. An offset lets several sets share one ID space.
import { InvalidArgumentError, type MachineIdProvider } from '@ids/engine';
import { NoPodOrdinalError, received } from './errors.js';
import { checkFits } from './ipv4.js';

/** Where the pod's name and index are read; `process.env` by default. */
export type EnvSource = Readonly<Record<string, string | undefined>>;

/** Where `kubernetesOrdinalMachineId` reads the ordinal, and what it adds to it. */
export interface KubernetesOrdinalOptions {
  /** Added to the ordinal, so several StatefulSets can share one ID space. Default 0. */
  readonly offset?: number;
  /** The pod name. Default: HOSTNAME from `env` (a StatefulSet pod's hostname is its name). */
  readonly hostname?: string;
  /**
   * The pod's ordinal as the `apps.kubernetes.io/pod-index` label gives it (Kubernetes 1.28+),
   * exposed through the downward API. Default: IDS_POD_INDEX from `env`. Wins over the name.
   */
  readonly podIndex?: string | number;
  /**
   * The StatefulSet's name: the pod name must then be `<statefulSet>-<ordinal>`, and any
   * ordinal is taken, even one that looks like a random pod-name suffix. Default:
   * IDS_STATEFULSET from `env`.
   */
  readonly statefulSet?: string;
  /** Where HOSTNAME, IDS_POD_INDEX and IDS_STATEFULSET are read, when the call is made. Default process.env. */
  readonly env?: EnvSource;
}

/** A pod's ordinal, and where it was read. */
export interface PodOrdinal {
  /** The ordinal. */
  readonly ordinal: number;
  /** Where it was read, in words: `pod name ids-2`, `pod name ids-2 of StatefulSet ids` or `IDS_POD_INDEX=2`. */
  readonly from: string;
}

// An ordinal is decimal without leading zeros (at most 9 digits, so offset + ordinal stays exact).
const ORDINAL = '(0|[1-9][0-9]{0,8})';
// A StatefulSet pod is <set>-<ordinal>.
const STATEFUL = new RegExp(`^(.+)-${ORDINAL}$`);
// The pods of DaemonSets, Deployments (<name>-<hash>-<suffix>), Jobs and ReplicaSets end in a
// random 5-character suffix from this alphabet. Its digits (2 4 5 6 7 8 9) can make it all
// digits, and then `node-agent-24657` looks like ordinal 24657: without the set's name such a
// suffix is never taken for an ordinal.
const RANDOM_SUFFIX = /^[bcdfghjklmnpqrstvwxz2456789]{5}$/;
// A StatefulSet's name is a DNS subdomain: lower-case letters, digits, '-' and '.'.
const SET_NAME = /^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/;

function fromIndex(raw: string | number): PodOrdinal {
  const text = String(raw);
  if (!new RegExp(`^${ORDINAL}$`).test(text)) {
    throw new NoPodOrdinalError(
      `IDS_POD_INDEX: expected the pod's ordinal (the apps.kubernetes.io/pod-index label), a decimal integer, received ${received(raw)}`,
    );
  }
  return { ordinal: Number(text), from: `IDS_POD_INDEX=${text}` };
}

function checkSetName(name: unknown, what: string): string {
  if (typeof name !== 'string' || !SET_NAME.test(name)) {
    throw new InvalidArgumentError(
      `${what}: expected a StatefulSet's name (lower-case letters, digits, '-' and '.'), received ${received(name)}`,
    );
  }
  return name;
}

/** The ordinal the pod name gives, or why it gives none. */
function fromName(hostname: string, statefulSet: string | undefined): PodOrdinal | string {
  const name = JSON.stringify(hostname);
  if (statefulSet !== undefined) {
    const ordinal = hostname.startsWith(`${statefulSet}-`) ? hostname.slice(statefulSet.length + 1) : '';
    if (!new RegExp(`^${ORDINAL}$`).test(ordinal)) {
      return `the pod name ${name} is not a pod of the StatefulSet ${statefulSet} (expected ${statefulSet}-<ordinal>, like ${statefulSet}-2)`;
    }
    return { ordinal: Number(ordinal), from: `pod name ${hostname} of StatefulSet ${statefulSet}` };
  }
  const named = hostname.match(STATEFUL);
  if (!named) {
    return `the pod name ${name} has no StatefulSet ordinal (expected <set>-<ordinal>, like ids-2)`;
  }
  const [, set = '', ordinal = ''] = named;
  if (RANDOM_SUFFIX.test(ordinal)) {
    return `the pod name ${name} ends in ${ordinal}, which can be the random 5-character suffix of a DaemonSet's, Deployment's or Job's pod: not taken as an ordinal. In a StatefulSet, name it (IDS_STATEFULSET=${set}) or set IDS_POD_INDEX from the apps.kubernetes.io/pod-index label`;
  }
  return { ordinal: Number(ordinal), from: `pod name ${hostname}` };
}

/**
 * The pod's ordinal: the pod index when given, else the number ending the pod name. Without the
 * StatefulSet's name, a name ending in 5 characters a random pod-name suffix could be
 * (`node-agent-24657`) gives no ordinal: a DaemonSet's or Deployment's pod is never read as one.
 * @throws NoPodOrdinalError for a name without an ordinal, such a name, a name not of the given
 * StatefulSet, a malformed index, or an index and a name that disagree. InvalidArgumentError
 * for a malformed StatefulSet name.
 */
export function podOrdinal(options: Omit<KubernetesOrdinalOptions, 'offset'> = {}): PodOrdinal {
  const env = options.env ?? process.env;
  const hostname = options.hostname ?? env.HOSTNAME;
  const index = options.podIndex ?? env.IDS_POD_INDEX;
  const setName = options.statefulSet ?? (env.IDS_STATEFULSET || undefined);
  const statefulSet =
    setName === undefined
      ? undefined
      : checkSetName(setName, options.statefulSet === undefined ? 'IDS_STATEFULSET' : 'statefulSet');
  const named = hostname ? fromName(hostname, statefulSet) : undefined;
  if (index !== undefined && index !== '') {
    const given = fromIndex(index);
    if (typeof named === 'object' && named.ordinal !== given.ordinal) {
      throw new NoPodOrdinalError(
        `the pod index ${given.ordinal} (IDS_POD_INDEX) and the pod name ${hostname} (ordinal ${named.ordinal}) disagree`,
      );
    }
    return given;
  }
  if (named === undefined) {
    throw new NoPodOrdinalError(
      'no pod name: HOSTNAME is not set and no pod index was given (set IDS_POD_INDEX from the apps.kubernetes.io/pod-index label)',
    );
  }
  if (typeof named === 'string') throw new NoPodOrdinalError(named);
  return named;
}

/** Checks an ordinal offset: an integer from 0 to 2^30 - 1. */
export function checkOffset(offset: unknown, what = 'offset'): number {
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset >= 2 ** 30) {
    throw new InvalidArgumentError(
      `${what}: expected an integer from 0 to ${2 ** 30 - 1}, received ${received(offset)}`,
    );
  }
  return offset;
}

/**
 * A machine ID from a StatefulSet pod's ordinal plus `offset`: pod `ids-2` with offset 10 gets
 * 12. Read when the provider is called, so it suits a generator built at start-up.
 *
 * @throws InvalidArgumentError at once for a bad offset or StatefulSet name. The provider throws NoPodOrdinalError
 * (see `podOrdinal`) and MachineIdDoesNotFitError when ordinal + offset needs more bits than
 * the machine field has.
 */
export function kubernetesOrdinalMachineId(options: KubernetesOrdinalOptions = {}): MachineIdProvider {
  const offset = checkOffset(options.offset ?? 0);
  if (options.statefulSet !== undefined) checkSetName(options.statefulSet, 'statefulSet');
  return ({ bits }) => {
    const { ordinal, from } = podOrdinal(options);
    return checkFits(ordinal + offset, bits, `the ordinal ${ordinal} (${from}) plus offset ${offset}`);
  };
}
