import { InvalidArgumentError, type MachineIdCheck } from '@ids/engine';
import { checkAskedId, checkOptionsObject, DEFAULT_TIMEOUT_MS, ms } from '@ids/machine-lease/internal';
import { Connection } from './connection.js';
import { connectionUrl, parsePrefix, type RedisConnectionOptions } from './options.js';

/** The options of `redisCheckMachineId`: how to reach Redis, and the set that holds the IDs. */
export interface RedisCheckOptions extends RedisConnectionOptions {
  /** The Redis set of IDs in use (Go's pattern: `SADD <key> <id>`). Default `ids:machine-ids`. */
  readonly key?: string;
  /** The longest a SADD or SREM may take, in ms, above 0. Default 3,000. */
  readonly timeoutMs?: number;
}

/** Go's `CheckMachineID` on a Redis set, plus what it lacks: removal on close, and typed errors. */
export interface RedisMachineIdCheck extends MachineIdCheck {
  (machineId: number): Promise<boolean>;
  /** Removes from the set every ID this check added (SREM), then closes the client if it was made here. Idempotent. */
  close(): Promise<void>;
}

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
 * The check rejects (never a silent true or false) with LeaseStoreUnavailableError when Redis
 * does not answer within `timeoutMs`, LeaseStoreRefusedError when it refuses (credentials, a key of
 * another type).
 */
export function redisCheckMachineId(options: RedisCheckOptions = {}): RedisMachineIdCheck {
  checkOptionsObject(options);
  const url = connectionUrl(options);
  const key = options.key === undefined ? DEFAULT_CHECK_KEY : parsePrefix(options.key, 'key');
  const timeoutMs = ms(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs', false);
  let conn: Connection | undefined;
  const added = new Set<number>();
  let closed = false;

  const check = async (machineId: number): Promise<boolean> => {
    if (closed) throw new InvalidArgumentError('the check was closed', { option: 'check' });
    checkAskedId(machineId);
    conn ??= new Connection(options, url, timeoutMs);
    const reply = await conn.call(`adding ${machineId} to ${key}`, (c) => c.sadd(key, String(machineId)));
    if (reply === 1) added.add(machineId);
    return reply === 1;
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
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
  };
  return Object.defineProperty(check, 'close', { value: close, enumerable: true }) as RedisMachineIdCheck;
}
