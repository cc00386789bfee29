import type { MachineIdClaim } from '@ids/engine';
import { errorText } from '@ids/engine/internal';
import { type RedisMachineIdOptions, redisMachineId } from './claim.js';
import { redact } from './url.js';

/** What the `auto` chain tells a step (the fields this step reads). */
export interface RedisAutoStepContext {
  /** Bits of the machine field. */
  readonly bits: number;
  /** Where IDS_REDIS_URL is read. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The step's answer, in the chain's vocabulary: used, skipped, or failed (stopping the chain). */
export type RedisAutoStepAnswer =
  | {
      /** It gave the ID. */
      readonly outcome: 'used';
      /** The claim holding it. */
      readonly machineId: MachineIdClaim;
      /** Where it came from. */
      readonly detail: string;
    }
  | {
      /** No Redis was given. */
      readonly outcome: 'skipped';
      /** Why there was nothing to try. */
      readonly detail: string;
    }
  | {
      /** The Redis asked for could not give an ID. */
      readonly outcome: 'failed';
      /** What was tried and why it gave nothing. */
      readonly detail: string;
      /** The error that ends the chain (its cause). */
      readonly stop: unknown;
    };

/** A named step for `@ids/machine-file`'s `auto` chain (its `AutoChainStep` shape). */
export interface RedisAutoStep {
  /** `redis`, in the trail and in `--explain`. */
  readonly name: 'redis';
  /** `Redis claim`, for a person. */
  readonly title: string;
  /** Claims an ID in Redis when a URL (or client) is given; skipped otherwise. */
  run(context: RedisAutoStepContext): Promise<RedisAutoStepAnswer>;
}

/**
 * The Redis step of the `auto` chain: when `options.url` (or `client`) or IDS_REDIS_URL is
 * given, it claims an ID with `redisMachineId` and the chain uses it; otherwise it is skipped.
 * A Redis that was asked for but fails (unreachable, refused, full) stops the chain instead of
 * falling through: a host-derived ID beside a Redis-held fleet could repeat one of its IDs.
 *
 * ```ts no-run
 * const { machineId, trail } = await autoMachineIdAsync({ steps: [redisAutoStep(), ...AUTO_STEPS] });
 * ```
 *
 * @throws RedisOptionError at once for an option that cannot work (the URL from IDS_REDIS_URL
 * is checked when the step runs, and a bad one stops the chain with that error).
 */
export function redisAutoStep(options: RedisMachineIdOptions = {}): RedisAutoStep {
  // Validate what was given now; the URL may still come from the environment at run time.
  if (options.url !== undefined || options.client !== undefined) redisMachineId(options);
  return {
    name: 'redis',
    title: 'Redis claim',
    async run({ bits, env }) {
      const url =
        options.url ?? (options.client === undefined ? env.IDS_REDIS_URL?.trim() || undefined : undefined);
      if (url === undefined && options.client === undefined) {
        return { outcome: 'skipped', detail: 'IDS_REDIS_URL is not set (and no Redis was given)' };
      }
      const where =
        options.client === undefined ? `Redis at ${redact(url as string)}` : 'the Redis client given';
      try {
        const claim = await redisMachineId(options.client === undefined ? { ...options, url } : options)({
          bits,
        });
        return {
          outcome: 'used',
          machineId: claim,
          detail: `claimed machine ID ${claim.machineId} in ${where} (key ${claim.key})`,
        };
      } catch (error) {
        return {
          outcome: 'failed',
          detail: `could not claim a machine ID in ${where}: ${errorText(error)}`,
          stop: error,
        };
      }
    },
  };
}
