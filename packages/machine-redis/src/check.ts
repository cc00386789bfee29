import type { StoreCheckOptions, StoreMachineIdCheck } from '@ids/machine-lease';
import { checkTimeoutOption, storeCheck } from '@ids/machine-lease/internal';
import { Connection } from './connection.js';
import { connectionUrl, parsePrefix, type RedisConnectionOptions } from './options.js';

/** The options of `redisCheckMachineId`: how to reach Redis, the set that holds the IDs, and `timeoutMs` (each SADD or SREM). */
export interface RedisCheckOptions extends RedisConnectionOptions, StoreCheckOptions {
  /** The Redis set of IDs in use (Go's pattern: `SADD <key> <id>`). Default `ids:machine-ids`. */
  readonly key?: string;
}

/**
 * Go's `CheckMachineID` on a Redis set, plus what it lacks: removal on close, and typed errors.
 * `close()` removes from the set every ID this check added (SREM), then closes the client if it
 * was made here.
 */
export interface RedisMachineIdCheck extends StoreMachineIdCheck {}

/** Where the IDs live when no key is given. */
export const DEFAULT_CHECK_KEY = 'ids:machine-ids';

/**
 * A `checkMachineId` for either generator, as Go's settings show it: `SADD <key> <id>` answers
 * true when this call added the ID (1), false when it was already in the set (0). `close()`
 * removes the IDs this check added, so a clean restart gets its ID back. It holds no lease: a
 * process that crashes, or is paused, keeps its ID in the set until an operator removes it, and
 * nothing stops a paused holder from issuing after resuming. Use `redisMachineId` for that.
 *
 * ```ts
 * const check = redisCheckMachineId({ url: 'redis://redis:6379' });
 * const sonyflake = await Sonyflake.create({ machineId: 7, checkMachineId: check });
 * // ... on shutdown:
 * await sonyflake.close();
 * await check.close();
 * ```
 *
 * @throws InvalidArgumentError at once for an option that cannot work (names it).
 * The check rejects (never a silent true or false) with StoreUnavailableError when Redis
 * does not answer within `timeoutMs`, LeaseStoreRefusedError when it refuses (credentials, a key of
 * another type).
 */
export function redisCheckMachineId(options: RedisCheckOptions = {}): RedisMachineIdCheck {
  const timeoutMs = checkTimeoutOption(options);
  const url = connectionUrl(options);
  const key = options.key === undefined ? DEFAULT_CHECK_KEY : parsePrefix(options.key, 'key');
  let conn: Connection | undefined;
  const added = new Set<number>();
  return storeCheck<RedisMachineIdCheck>(
    async (machineId) => {
      conn ??= new Connection(options, url, timeoutMs, 'machine-id');
      const reply = await conn.call(`adding ${machineId} to ${key}`, (c) => c.sadd(key, String(machineId)));
      if (reply === 1) added.add(machineId);
      return reply === 1;
    },
    async () => {
      const c = conn;
      if (!c) return;
      try {
        if (added.size > 0) {
          const ids = [...added].map(String);
          await c.call(`removing ${ids.join(', ')} from ${key}`, (client) => client.srem(key, ...ids));
        }
      } finally {
        c.close();
      }
    },
  );
}
