import { IdsError } from '@ids/engine';

// An option of redisMachineId / redisCheckMachineId, or a redis:// URL, that cannot work is the
// engine's InvalidArgumentError naming the option. What Redis itself reports is one of the lease
// errors of @ids/machine-lease (re-exported here), with `store: 'redis'`.

/**
 * The database a URL names cannot be selected: the server has fewer (its `databases` setting),
 * or refuses SELECT. Waiting will not fix it.
 */
export class RedisDatabaseError extends IdsError {
  readonly code = 'ERR_IDS_REDIS_DATABASE';
  override readonly name = 'RedisDatabaseError';
  constructor(
    /** The database asked for. */
    readonly database: number,
    /** How many databases the server has (0 to this minus 1), when it said. */
    readonly databases: number | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
