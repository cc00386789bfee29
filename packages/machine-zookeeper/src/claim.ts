import type { MachineIdContext } from '@ids/engine';
import { Holder, type HolderOptions, holderOptions, type LeasedClaim, schedulerOf } from '@ids/machine-lease';
import { ZkSession } from './client.js';
import { ZookeeperBitsMismatchError, ZookeeperOptionError } from './errors.js';
import { checkLeafOptions, type LeafWorkerOptions, readLeafWorker } from './leaf.js';
import { checkZookeeperOptions, type ZookeeperLeaseOptions } from './options.js';
import { ZookeeperStore } from './store.js';

/** The options of `zookeeperMachineId`: how to reach ZooKeeper, hold a claim there, and pick and record an ID. */
export interface ZookeeperMachineIdOptions extends ZookeeperLeaseOptions, HolderOptions {
  /**
   * Takes over the worker ID that Meituan Leaf's snowflake mode gave `ip:port` under
   * `/snowflake/<name>/forever`: that ID only (ZookeeperSpaceFullError while another holder has
   * it), issued from only after the time the Leaf node last reported. Stop the Leaf instance
   * first: Leaf itself takes no claim, so it would issue beside us. Default: none.
   */
  readonly leaf?: LeafWorkerOptions;
}

/** A machine ID held through an ephemeral node of a ZooKeeper session; the generator watches it (see MachineIdClaim). */
export interface ZookeeperMachineIdClaim extends LeasedClaim {
  /** Aborts, with a ZookeeperLeaseLostError as reason, when the claim can no longer be trusted, or on release. */
  readonly signal: AbortSignal;
  /** The claim node, `<path>/claims/<id>`. */
  readonly key: string;
  /** The session's ID (16 hex digits). */
  readonly leaseId: string;
  /** Fences at once if the claim's trust deadline has passed (timers may not have run yet). */
  verify(): void;
  /** Writes the time reached (kept only if later) to `<path>/times/<id>`, while the claim is the session's. */
  record(timeMs: number): Promise<void>;
  /** Once the signal aborted: resolves with a claim again (the same ID if still free), retrying while ZooKeeper is unavailable. */
  renew(): Promise<ZookeeperMachineIdClaim>;
  /** Closes the session (the server deletes the claim at once). Idempotent. */
  release(): Promise<void>;
}

/** What zookeeperMachineId returns: a MachineIdProvider whose result is always a ZookeeperMachineIdClaim. */
export type ZookeeperMachineIdProvider = (context: MachineIdContext) => Promise<ZookeeperMachineIdClaim>;

/**
 * A machine-ID provider that claims a free ID in [0, 2^bits) in ZooKeeper and holds it with an
 * ephemeral node of its own session, for generators across a fleet:
 *
 * ```ts no-run
 * const sonyflake = await Sonyflake.create({ machineId: zookeeperMachineId({ connect: 'zk1:2181,zk2:2181,zk3:2181' }) });
 * ```
 *
 * The session is the lease: the claim fences the generator before the session could expire
 * (the session timeout minus `fenceMarginMs` after the last confirmed keepalive, on this
 * process's clock, or at once when the session is reported expired), renews itself afterwards
 * with a new session, records the time reached in a persistent node so the next holder starts
 * after it, and closes its session on `close()`.
 *
 * Options are validated here, at once.
 * @throws ZookeeperOptionError for an option that cannot work (names it).
 * The provider rejects with ZookeeperUnavailableError (no session or answer within
 * `timeoutMs`), ZookeeperChrootError, ZookeeperRequestError (an ACL refuses),
 * ZookeeperBitsMismatchError, ZookeeperCorruptNodeError, ZookeeperSpaceFullError.
 */
export function zookeeperMachineId(options: ZookeeperMachineIdOptions = {}): ZookeeperMachineIdProvider {
  const s = checkZookeeperOptions(options);
  const choices = holderOptions(
    options,
    (option, message) => new ZookeeperOptionError(option, message),
    s.ttlSeconds,
  );
  const leaf = options.leaf === undefined ? undefined : checkLeafOptions(options.leaf);
  const scheduler = schedulerOf(options);
  return async ({ bits }: MachineIdContext) => {
    if (s.bits !== undefined && s.bits !== bits) {
      throw new ZookeeperBitsMismatchError(
        `zookeeperMachineId was set up for a ${s.bits}-bit machine field (bits: ${s.bits}), but the generator's field has ${bits} bits`,
      );
    }
    const worker = leaf === undefined ? undefined : await leafWorker(s.connect, s.timeoutMs, leaf, bits);
    const floors = new Map(worker ? [[worker.workerId, worker.timestamp]] : []);
    const store = new ZookeeperStore(s.connect, s.path, s, floors);
    try {
      const only = worker === undefined ? {} : { only: worker.workerId };
      const holder = new Holder(store, { ...s, ...choices, bits, ...only }, scheduler);
      return (await holder.acquire()) as ZookeeperMachineIdClaim;
    } catch (error) {
      store.close();
      throw error;
    }
  };
}

/** Reads Leaf's worker for ip:port on a short session of its own, and checks that it fits the field. */
async function leafWorker(
  connect: Parameters<typeof ZkSession.open>[0],
  timeoutMs: number,
  leaf: LeafWorkerOptions,
  bits: number,
) {
  const session = await ZkSession.open(connect, { sessionTimeoutMs: 10_000, timeoutMs });
  try {
    const worker = await readLeafWorker(session, leaf);
    if (worker.workerId >= 2 ** bits) {
      throw new ZookeeperBitsMismatchError(
        `Leaf gave ${leaf.ip}:${leaf.port} worker ID ${worker.workerId} (${worker.path}), which does not fit the generator's ${bits}-bit machine field (0 to ${2 ** bits - 1})`,
      );
    }
    return worker;
  } finally {
    await session.close();
  }
}
