import type { MachineIdContext } from '@ids/engine';
import { Holder, type HolderOptions, holderOptions, type LeasedClaim, schedulerOf } from '@ids/machine-lease';
import { Connection } from './connection.js';
import { RedisBitsMismatchError, RedisOptionError } from './errors.js';
import { type RedisLeaseOptions, checkRedisOptions as validate } from './options.js';
import { RedisStore } from './store.js';

/** The options of `redisMachineId`: how to reach Redis, hold a claim there, and pick and record an ID. */
export interface RedisMachineIdOptions extends RedisLeaseOptions, HolderOptions {}

/** A machine ID held through a Redis key with a TTL; the generator watches it (see MachineIdClaim). */
export interface RedisMachineIdClaim extends LeasedClaim {
  /** Aborts, with a RedisLeaseLostError as reason, when the claim can no longer be trusted, or on release. */
  readonly signal: AbortSignal;
  /** The claim key, `{<prefix>}:<id>`. */
  readonly key: string;
  /** The random token in the claim's value (32 hex digits). */
  readonly leaseId: string;
  /** Fences at once if the claim's trust deadline has passed (timers may not have run yet). */
  verify(): void;
  /** Writes the time reached (kept only if later) to `{<prefix>}:time:<id>`, while the key is ours. */
  record(timeMs: number): Promise<void>;
  /** Once the signal aborted: resolves with a claim again (the same ID if still free), retrying while Redis is unavailable. */
  renew(): Promise<RedisMachineIdClaim>;
  /** Deletes the claim key if it is still ours (compare-and-delete) and closes the client if it was made here. Idempotent. */
  release(): Promise<void>;
}

/** What redisMachineId returns: a MachineIdProvider whose result is always a RedisMachineIdClaim. */
export type RedisMachineIdProvider = (context: MachineIdContext) => Promise<RedisMachineIdClaim>;

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
 * Options are validated here, at once.
 * @throws RedisOptionError for an option that cannot work (names it).
 * The provider rejects with RedisUnavailableError (no answer within `timeoutMs`),
 * RedisRequestError (credentials, permissions, TLS), RedisBitsMismatchError,
 * RedisCorruptClaimError, RedisSpaceFullError.
 */
export function redisMachineId(options: RedisMachineIdOptions = {}): RedisMachineIdProvider {
  const s = validate(options);
  const choices = holderOptions(
    options,
    (option, message) => new RedisOptionError(option, message),
    s.ttlSeconds,
  );
  const scheduler = schedulerOf(options);
  return async ({ bits }: MachineIdContext) => {
    if (s.bits !== undefined && s.bits !== bits) {
      throw new RedisBitsMismatchError(
        `redisMachineId was set up for a ${s.bits}-bit machine field (bits: ${s.bits}), but the generator's field has ${bits} bits`,
      );
    }
    const store = new RedisStore(new Connection(options, s.url, s.timeoutMs), s.prefix);
    try {
      const holder = new Holder(store, { ...s, ...choices, bits }, scheduler);
      return (await holder.acquire()) as RedisMachineIdClaim;
    } catch (error) {
      store.close();
      throw error;
    }
  };
}
