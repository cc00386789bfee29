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
  /** Where HOSTNAME and IDS_POD_INDEX are read, when the call is made. Default process.env. */
  readonly env?: EnvSource;
}

/** A pod's ordinal, and where it was read. */
export interface PodOrdinal {
  /** The ordinal. */
  readonly ordinal: number;
  /** Where it was read, in words: `pod name ids-2` or `IDS_POD_INDEX=2`. */
  readonly from: string;
}

// A StatefulSet pod is <set>-<ordinal>, the ordinal in decimal without leading zeros.
const STATEFUL = /^(.+)-(0|[1-9][0-9]{0,8})$/;
// A Deployment pod is <deployment>-<pod-template-hash>-<5 random>, both drawn from this
// alphabet, whose digits can make the last part look like an ordinal ("web-7c9d8f6b4-24657").
const SAFE = '[bcdfghjklmnpqrstvwxz2456789]';
const REPLICA_SET = new RegExp(`-${SAFE}{6,10}-${SAFE}{5}$`);

function fromIndex(raw: string | number): PodOrdinal {
  const text = String(raw);
  if (!/^(0|[1-9][0-9]{0,8})$/.test(text)) {
    throw new NoPodOrdinalError(
      `IDS_POD_INDEX: expected the pod's ordinal (the apps.kubernetes.io/pod-index label), a decimal integer, received ${received(raw)}`,
    );
  }
  return { ordinal: Number(text), from: `IDS_POD_INDEX=${text}` };
}

/**
 * The pod's ordinal: the pod index when given, else the number ending the pod name.
 * @throws NoPodOrdinalError for a name without one, a name shaped like a Deployment's pod
 * (whose random suffix may be all digits), a malformed index, or an index and a name that disagree.
 */
export function podOrdinal(options: Omit<KubernetesOrdinalOptions, 'offset'> = {}): PodOrdinal {
  const env = options.env ?? process.env;
  const hostname = options.hostname ?? env.HOSTNAME;
  const index = options.podIndex ?? env.IDS_POD_INDEX;
  const named = hostname?.match(STATEFUL);
  if (index !== undefined && index !== '') {
    const given = fromIndex(index);
    if (named && !REPLICA_SET.test(hostname!) && Number(named[2]) !== given.ordinal) {
      throw new NoPodOrdinalError(
        `the pod index ${given.ordinal} (IDS_POD_INDEX) and the pod name ${hostname} (ordinal ${named[2]}) disagree`,
      );
    }
    return given;
  }
  if (hostname === undefined || hostname === '') {
    throw new NoPodOrdinalError(
      'no pod name: HOSTNAME is not set and no pod index was given (set IDS_POD_INDEX from the apps.kubernetes.io/pod-index label)',
    );
  }
  if (!named) {
    throw new NoPodOrdinalError(
      `the pod name ${JSON.stringify(hostname)} has no StatefulSet ordinal (expected <set>-<ordinal>, like ids-2)`,
    );
  }
  if (REPLICA_SET.test(hostname)) {
    throw new NoPodOrdinalError(
      `the pod name ${JSON.stringify(hostname)} has the shape of a Deployment's pod (<name>-<hash>-<random>), whose random suffix can be all digits: not taken as an ordinal. In a StatefulSet, set IDS_POD_INDEX from the apps.kubernetes.io/pod-index label`,
    );
  }
  return { ordinal: Number(named[2]), from: `pod name ${hostname}` };
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
 * @throws InvalidArgumentError at once for a bad offset. The provider throws NoPodOrdinalError
 * (see `podOrdinal`) and MachineIdDoesNotFitError when ordinal + offset needs more bits than
 * the machine field has.
 */
export function kubernetesOrdinalMachineId(options: KubernetesOrdinalOptions = {}): MachineIdProvider {
  const offset = checkOffset(options.offset ?? 0);
  return ({ bits }) => {
    const { ordinal, from } = podOrdinal(options);
    return checkFits(ordinal + offset, bits, `the ordinal ${ordinal} (${from}) plus offset ${offset}`);
  };
}
