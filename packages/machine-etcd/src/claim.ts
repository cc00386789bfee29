import { type LeasedMachineIdProvider, leasedMachineId } from '@ids/machine-lease';
import { Connection } from './connection.js';
import { type EtcdOptions, checkEtcdOptions as validate } from './options.js';
import { EtcdStore } from './store.js';

/** The options of `etcdMachineId`: how to reach etcd (EtcdOptions), and how to pick and record an ID. */
export interface EtcdMachineIdOptions extends EtcdOptions {
  /**
   * Hold exactly this machine ID instead of any free one: the safe form of Go's
   * `CheckMachineID` for an ID you chose (a lease, fencing, renewal; see the README). Taken by
   * another process: the provider rejects with LeaseSpaceFullError. Default: any free ID.
   */
  readonly machineId?: number;
  /**
   * Random IDs tried before listing the taken ones, 0 to 64, else InvalidArgumentError. Default 3:
   * in a sparse field a random ID is almost always free, and one request beats a listing.
   */
  readonly probes?: number;
  /**
   * How often, in ms, the generator records the time it reached on the claim (one etcd write
   * each time the tick moved). Default 1,000; above 0, else InvalidArgumentError.
   */
  readonly recordIntervalMs?: number;
  /**
   * The longest a claim waits, in ms, for the time an earlier holder recorded for its ID when
   * that time lies ahead of this host's clock (the wait is reported once through `onError`);
   * further ahead, the provider rejects with LeaseTimeAheadError. An integer from 0 to
   * 2,147,483,647, else InvalidArgumentError. Default: the TTL plus 60,000 ms.
   */
  readonly maxNotBeforeWaitMs?: number;
  /**
   * Receives the RecordedTimeWait notice of such a wait. Default: a process warning. Not a
   * function: InvalidArgumentError.
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Every claim this provider makes while another of its claims is held goes under one etcd
   * lease, kept alive by one keepalive, on one client (an `ids-server --machines 64` pays one
   * lease, not 64). The claims are fenced together when the lease is lost, and each keeps its ID
   * when it recovers; releasing one deletes its key, releasing the last revokes the lease.
   * Default false: a lease per claim.
   */
  readonly shareLease?: boolean;
}

/**
 * A machine-ID provider that claims a free ID in [0, 2^bits) from etcd and holds it with a
 * lease, for generators across a fleet:
 *
 * ```ts
 * const sonyflake = await Sonyflake.create({ machineId: etcdMachineId({ endpoints: 'http://etcd:2379' }) });
 * ```
 *
 * The claim it returns fences the generator when the lease can no longer be trusted (a failed
 * keepalive, or TTL minus `fenceMarginMs` since the last confirmed one), renews itself
 * afterwards, records the time reached so the next holder of the ID starts after it, and is
 * released (lease revoked, client closed) by the generator's `close()`.
 *
 * The claim is a LeasedClaim: its `key` is `<prefix>/<id>`, its `leaseId` the etcd lease
 * (decimal); `record` writes `<prefix>/time/<id>`; a watcher on the key fences it at once when
 * the key is deleted or re-bound. `renew()` retries while etcd is unavailable and rejects on
 * what retrying cannot fix (garbage under the prefix, a bits mismatch, refused credentials).
 * `release` revokes the lease (the key is gone at once) and closes the client if it was made
 * here, rejecting with StoreUnavailableError when etcd could not be told (etcd then frees
 * the ID when the lease expires, within the TTL).
 *
 * Options are validated here, at once.
 * @throws InvalidArgumentError for an option that cannot work (names it).
 * The provider rejects with the lease errors of @ids/machine-lease, `store: 'etcd'`:
 * StoreUnavailableError (etcd not reachable within `timeoutMs`), LeaseBitsMismatchError,
 * LeaseCorruptClaimError, LeaseSpaceFullError, LeaseTimeAheadError, LeaseStoreRefusedError.
 */
export function etcdMachineId(options: EtcdMachineIdOptions = {}): LeasedMachineIdProvider {
  const checked = validate(options);
  return leasedMachineId({
    store: 'etcd',
    options,
    lease: checked,
    open: () => new EtcdStore(new Connection(options, checked, 'machine-id'), checked.prefix),
  });
}
