import type { StoreMachineIdCheck } from '@ids/machine-lease';
import { LeaseBitsMismatchError, LeaseLostError } from '@ids/machine-lease/errors';
import { grantLease, type Lease, schedulerOf, storeCheck } from '@ids/machine-lease/internal';
import { Connection } from './connection.js';
import { type EtcdOptions, checkEtcdOptions as validate } from './options.js';
import { EtcdStore } from './store.js';

/**
 * Go's `CheckMachineID`, answered by etcd, plus what a held lease needs. `close()` revokes the
 * lease, which frees every ID this check took at once, and closes the client.
 */
export interface EtcdMachineIdCheck extends StoreMachineIdCheck {
  /**
   * Aborts, with a LeaseLostError as reason, when the lease holding the checked IDs can
   * no longer be trusted. A check cannot stop a generator by itself (Go's check is asked once);
   * use etcdMachineId for fencing, or watch this.
   */
  readonly signal: AbortSignal;
}

/**
 * A `checkMachineId` for either generator: it creates `<prefix>/<id>` only if absent, bound to
 * a lease it keeps alive, with this process's identity (host, pid, start time) as value.
 * Answers true when it created the key (or the key is already its own), false when another
 * owner holds it.
 *
 * ```ts
 * const check = etcdCheckMachineId({ endpoints: 'http://etcd:2379' });
 * const sonyflake = await Sonyflake.create({ machineId: 7, checkMachineId: check });
 * // ... on shutdown:
 * await sonyflake.close();
 * await check.close();
 * ```
 *
 * The lease is granted at the first call and kept until `close()`; if it is lost, `signal`
 * aborts and the next call takes a new lease.
 * @throws InvalidArgumentError at once for an option that cannot work (names it).
 * The check rejects with the lease errors of @ids/machine-lease, `store: 'etcd'`:
 * StoreUnavailableError (within `timeoutMs`), LeaseCorruptClaimError (the key holds
 * something this package did not write), LeaseBitsMismatchError (an ID outside `bits`),
 * LeaseStoreRefusedError.
 */
export function etcdCheckMachineId(options: EtcdOptions = {}): EtcdMachineIdCheck {
  const s = validate(options);
  const scheduler = schedulerOf(options);
  let store: EtcdStore | undefined;
  let lease: Promise<Lease> | undefined;
  let controller = new AbortController();

  function leaseNow(on: EtcdStore): Promise<Lease> {
    if (lease) return lease;
    const held = controller;
    const granted: Promise<Lease> = grantLease(on, s, scheduler, (_, reason) => {
      // The next call starts over with a new lease and a new signal.
      if (lease === granted) lease = undefined;
      controller = new AbortController();
      held.abort(reason);
    }).then(
      (l) => {
        // Started once `lease` holds it: a keeper that fences at its start then clears it.
        l.keeper.start();
        return l;
      },
      (error: unknown) => {
        if (lease === granted) lease = undefined;
        throw error;
      },
    );
    lease = granted;
    return granted;
  }

  return storeCheck<EtcdMachineIdCheck>(
    async (machineId) => {
      if (s.bits !== undefined && machineId >= 2 ** s.bits) {
        throw new LeaseBitsMismatchError(
          'etcd',
          `machine ID ${machineId} does not fit the ${s.bits}-bit field this check was set up for (bits: ${s.bits})`,
        );
      }
      store ??= new EtcdStore(new Connection(options, s, 'machine-id'), s.prefix);
      const held = await leaseNow(store);
      const attempt = await store.tryCreate(held.id, machineId);
      if (held.keeper.lost) throw held.keeper.lost;
      return attempt.held;
    },
    async () => {
      const c = store;
      if (!c) return;
      try {
        const held = await lease?.catch(() => undefined);
        held?.keeper.stop();
        if (held) await c.revoke(held.id);
      } finally {
        c.close();
      }
    },
    () => new LeaseLostError('etcd', 'released', 'the check was closed'),
    // A getter, not a copied value: a lost lease replaces the controller.
    { signal: { get: () => controller.signal, enumerable: true } },
  );
}
