import { InvalidArgumentError } from '@ids/engine';
import { type HolderOptions, type LeasedMachineIdProvider, leasedMachineId } from '@ids/machine-lease';
import { LeaseBitsMismatchError } from '@ids/machine-lease/errors';
import { STORE, ZkSession } from './client.js';
import { checkLeafOptions, type LeafWorkerOptions, readLeafWorker } from './leaf.js';
import {
  type CheckedZookeeperOptions,
  checkZookeeperOptions,
  type ZookeeperLeaseOptions,
} from './options.js';
import { ZookeeperStore } from './store.js';

/** The options of `zookeeperMachineId`: how to reach ZooKeeper, hold a claim there, and pick and record an ID. */
export interface ZookeeperMachineIdOptions extends ZookeeperLeaseOptions, HolderOptions {
  /**
   * Takes over the worker ID that Meituan Leaf's snowflake mode gave `ip:port` under
   * `/snowflake/<name>/forever`: that ID only (LeaseSpaceFullError while another holder has
   * it), issued from only after the time the Leaf node last reported. Stop the Leaf instance
   * first: Leaf itself takes no claim, so it would issue beside us. Not with `machineId`
   * (InvalidArgumentError). Default: none.
   */
  readonly leaf?: LeafWorkerOptions;
}

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
 * The claim is a LeasedClaim: its `key` is `<path>/claims/<id>`, its `leaseId` the session's ID
 * (16 hex digits); `record` writes `<path>/times/<id>`; `renew()` retries while ZooKeeper is
 * unavailable (the same ID if still free); `release` closes the session (the server deletes the
 * claim at once).
 *
 * Options are validated here, at once.
 * @throws InvalidArgumentError for an option that cannot work (names it).
 * The provider rejects with the lease errors of @ids/machine-lease, `store: 'zookeeper'`:
 * StoreUnavailableError (no session or answer within `timeoutMs`), LeaseStoreRefusedError
 * (an ACL refuses), LeaseBitsMismatchError, LeaseCorruptClaimError, LeaseSpaceFullError,
 * LeaseTimeAheadError; and with ZookeeperChrootError, ZookeeperLeafWorkerError.
 */
export function zookeeperMachineId(options: ZookeeperMachineIdOptions = {}): LeasedMachineIdProvider {
  const checked = checkZookeeperOptions(options);
  const leaf = options.leaf === undefined ? undefined : checkLeafOptions(options.leaf);
  if (leaf !== undefined && options.machineId !== undefined) {
    throw new InvalidArgumentError(
      'expected either leaf (the worker ID Leaf gave) or machineId, received both',
      { option: 'leaf' },
    );
  }
  const provider = (machineId: number | undefined, floors?: ReadonlyMap<number, number>) =>
    leasedMachineId({
      store: STORE,
      options: machineId === undefined ? options : { ...options, machineId },
      lease: checked,
      open: () => new ZookeeperStore(checked.connect, checked.path, checked, floors),
    });
  // Made at once, so that the holder's options are checked now in Leaf mode too.
  const plain = provider(undefined);
  if (leaf === undefined) return plain;
  return async (context) => {
    // Leaf's worker ID is known only once its tree is read: that ID only, and not before the
    // time the Leaf instance last reported.
    const worker = await leafWorker(checked, leaf, context.bits);
    return provider(worker.workerId, new Map([[worker.workerId, worker.timestamp]]))(context);
  };
}

/** Reads Leaf's worker for ip:port on a short session of its own, and checks that it fits the field. */
async function leafWorker(checked: CheckedZookeeperOptions, leaf: LeafWorkerOptions, bits: number) {
  const session = await ZkSession.open(checked.connect, {
    sessionTimeoutMs: 10_000,
    timeoutMs: checked.timeoutMs,
    feature: 'machine-id',
  });
  try {
    const worker = await readLeafWorker(session, leaf);
    if (worker.workerId >= 2 ** bits) {
      throw new LeaseBitsMismatchError(
        STORE,
        `Leaf gave ${leaf.ip}:${leaf.port} worker ID ${worker.workerId} (${worker.path}), which does not fit the generator's ${bits}-bit machine field (0 to ${2 ** bits - 1})`,
      );
    }
    return worker;
  } finally {
    await session.close();
  }
}
