import { type HolderOptions, type LeasedMachineIdProvider, leasedMachineId } from '@ids/machine-lease';
import { Connection } from './connection.js';
import { type RedisLeaseOptions, checkRedisOptions as validate } from './options.js';
import { RedisStore } from './store.js';

/** The options of `redisMachineId`: how to reach Redis, hold a claim there, and pick and record an ID. */
export interface RedisMachineIdOptions extends RedisLeaseOptions, HolderOptions {}

/**
 * A machine-ID provider that claims a free ID in [0, 2^bits) in Redis and holds it with a key
 * that expires unless kept alive, for generators across a fleet:
 *
 * ```ts
 * const sonyflake = await Sonyflake.create({ machineId: redisMachineId({ url: 'redis://redis:6379' }) });
 * ```
 *
 * The claim fences the generator before the key can expire (TTL minus `fenceMarginMs` after the
 * last confirmed keepalive, or at once when one fails), renews itself afterwards, records the
 * time reached beside the claim so the next holder starts after it, and deletes only its own
 * key on `close()`. An ID with no recorded time is not issued from until one TTL after the
 * claim (see the README: a Redis that forgets).
 *
 * The claim is a LeasedClaim: its `key` is `{<prefix>}:<id>`, its `leaseId` the random token in
 * the key's value (32 hex digits); `record` writes `{<prefix>}:time:<id>` while the key is ours;
 * `renew()` retries while Redis is unavailable (the same ID if still free); `release` deletes the
 * key if it is still ours (compare-and-delete) and closes the client if it was made here.
 *
 * Options are validated here, at once.
 * @throws InvalidArgumentError for an option that cannot work (names it).
 * The provider rejects with the lease errors of @ids/machine-lease, `store: 'redis'`:
 * StoreUnavailableError (no answer within `timeoutMs`), LeaseStoreRefusedError
 * (credentials, permissions, TLS), LeaseBitsMismatchError, LeaseCorruptClaimError,
 * LeaseSpaceFullError (every ID held, or the `machineId` asked for), LeaseTimeAheadError.
 */
export function redisMachineId(options: RedisMachineIdOptions = {}): LeasedMachineIdProvider {
  const checked = validate(options);
  return leasedMachineId({
    store: 'redis',
    options,
    lease: checked,
    open: () =>
      new RedisStore(new Connection(options, checked.url, checked.timeoutMs, 'machine-id'), checked.prefix),
  });
}
