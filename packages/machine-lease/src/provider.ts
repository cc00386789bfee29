import { InvalidArgumentError, type MachineIdContext } from '@ids/engine';
import { received } from '@ids/engine/internal';
import type { LeasedClaim } from './claim.js';
import { LeaseBitsMismatchError } from './errors.js';
import { Holder } from './holder.js';
import { schedulerOf } from './keeper.js';
import { type CheckedLeaseOptions, type HolderOptions, holderOptions, integer } from './options.js';
import { SharedLease } from './shared.js';
import type { LeaseStore } from './store.js';

/**
 * What every lease store's provider returns (`etcdMachineId`, `redisMachineId`,
 * `zookeeperMachineId`, ...): a MachineIdProvider whose claim is always a LeasedClaim, whatever
 * the store; what `key` and `leaseId` hold is each store's, documented on its provider.
 */
export type LeasedMachineIdProvider = (context: MachineIdContext) => Promise<LeasedClaim>;

/**
 * The machine-ID provider of a lease store, written once: each store package validates its own
 * options (connection, prefix, lease timing) and says how to open its store; this checks the
 * holder's options at once and, per call, the field width, then claims through a Holder.
 *
 * ```ts no-run
 * export function myStoreMachineId(options: MyStoreOptions = {}) {
 *   const checked = checkMyStoreOptions(options); // connection, prefix, lease timing, bits
 *   return leasedMachineId({
 *     store: 'myStore',
 *     options,
 *     lease: checked,
 *     open: () => new MyStore(checked),
 *   });
 * }
 * ```
 *
 * @throws InvalidArgumentError (naming the option) for a holder option that cannot work.
 * The provider rejects with LeaseBitsMismatchError when the generator's field is not the one
 * the options fixed (`bits`) or does not hold `machineId`, and with whatever claiming rejects
 * with (LeaseSpaceFullError, StoreUnavailableError, ...); the store is closed then.
 */
export function leasedMachineId(provider: {
  /**
   * The store's name (its LeaseStore's `name`), for the errors raised before it is opened; the
   * provider function is `<store>MachineId` in messages.
   */
  readonly store: string;
  /** The user's options: the holder's (HolderOptions) and the tests' `scheduler` seam are read here. */
  readonly options: HolderOptions;
  /** The lease options, validated by the store package (timing, and `bits` when fixed). */
  readonly lease: CheckedLeaseOptions;
  /** Opens the store for one claim; the claim closes it on release. */
  readonly open: () => LeaseStore;
}): LeasedMachineIdProvider {
  const { store, options, lease, open } = provider;
  const name = `${store}MachineId`;
  const choices = holderOptions(options, lease.ttlSeconds);
  const scheduler = schedulerOf(options);
  const only = options.machineId;
  if (only !== undefined) integer(only, 'machineId', 0, 2 ** 30 - 1);
  if (options.shareLease !== undefined && typeof options.shareLease !== 'boolean') {
    throw new InvalidArgumentError(`expected true or false, received ${received(options.shareLease)}`, {
      option: 'shareLease',
    });
  }
  // The lease the claims share while one is held; after the last is released, a new one.
  let shared: SharedLease | undefined;
  return async ({ bits }: MachineIdContext) => {
    if (lease.bits !== undefined && lease.bits !== bits) {
      throw new LeaseBitsMismatchError(
        store,
        `${name} was set up for a ${lease.bits}-bit machine field (bits: ${lease.bits}), but the generator's field has ${bits} bits`,
      );
    }
    if (only !== undefined && only >= 2 ** bits) {
      throw new LeaseBitsMismatchError(
        store,
        `machineId ${only} does not fit the generator's ${bits}-bit machine field (0 to ${2 ** bits - 1})`,
      );
    }
    const settings = { ...lease, ...choices, bits, ...(only === undefined ? {} : { only }) };
    if (options.shareLease) {
      if (!shared || shared.closed) {
        const opened = open();
        if (!opened.drop) {
          opened.close();
          throw new InvalidArgumentError(
            `expected a store that can delete one claim alone, received ${store}, which cannot: leave shareLease out`,
            { option: 'shareLease' },
          );
        }
        shared = new SharedLease(opened, lease, scheduler);
      }
      const holder = new Holder(shared.store, settings, scheduler, shared);
      try {
        return await holder.acquire();
      } catch (error) {
        // Leaves the lease; the last member out closes the store.
        await holder.release().catch(() => undefined);
        throw error;
      }
    }
    const opened = open();
    try {
      const holder = new Holder(opened, settings, scheduler);
      return await holder.acquire();
    } catch (error) {
      opened.close();
      throw error;
    }
  };
}
