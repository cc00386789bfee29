// Redis as a step of @ids/machine-file's `auto` chain: a named provider (the engine's shape), so
// the CLI and the server pass it to the one chain as a configured store.
import { type NamedMachineIdProvider, NoMachineIdHereError } from '@ids/engine';
import { errorText } from '@ids/engine/internal';
import { type RedisMachineIdOptions, redisMachineId } from './claim.js';
import { redact } from './url.js';

/** `redisMachineId`'s options, and where IDS_REDIS_URL is read when neither `url` nor `client` is given. */
export interface RedisAutoStepOptions extends RedisMachineIdOptions {
  /** Where IDS_REDIS_URL is read. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The Redis step of the `auto` chain, named `redis` (title `Redis claim`): when `options.url` (or
 * `client`) or IDS_REDIS_URL is given, it claims an ID with `redisMachineId` and the chain uses
 * it; otherwise it has nothing to try (NoMachineIdHereError, skipped). A Redis that was asked
 * for but fails (unreachable, refused, full) stops the chain with that error instead of falling
 * through: a host-derived ID beside a Redis-held fleet could repeat one of its IDs.
 *
 * ```ts no-run
 * const provider = autoMachineId({ stores: [redisAutoStep()] });
 * ```
 *
 * @throws InvalidArgumentError at once for an option that cannot work (the URL from IDS_REDIS_URL
 * is checked when the step runs, and a bad one stops the chain with that error).
 */
export function redisAutoStep(options: RedisAutoStepOptions = {}): NamedMachineIdProvider {
  const { env = process.env, ...redis } = options;
  // Validate what was given now; the URL may still come from the environment at run time.
  if (redis.url !== undefined || redis.client !== undefined) redisMachineId(redis);
  return {
    name: 'redis',
    title: 'Redis claim',
    async provider({ bits, note }) {
      const url =
        redis.url ?? (redis.client === undefined ? env.IDS_REDIS_URL?.trim() || undefined : undefined);
      if (url === undefined && redis.client === undefined) {
        throw new NoMachineIdHereError('IDS_REDIS_URL is not set (and no Redis was given)', 'skipped');
      }
      const where =
        redis.client === undefined ? `Redis at ${redact(url as string)}` : 'the Redis client given';
      try {
        const claim = await redisMachineId(redis.client === undefined ? { ...redis, url } : redis)({ bits });
        note?.(`claimed machine ID ${claim.machineId} in ${where} (key ${claim.key})`);
        return claim;
      } catch (error) {
        note?.(`could not claim a machine ID in ${where}: ${errorText(error)}`);
        throw error;
      }
    },
  };
}
