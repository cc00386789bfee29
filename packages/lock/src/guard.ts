// Guards for the resource a lock protects. A lease cannot stop a holder that was paused past its
// TTL from writing late (Kleppmann's critique of lock services): only the resource can, by
// refusing a write whose fence is older than one it has already accepted. These helpers keep
// the last accepted fence beside the value and compare in the same atomic step.

import { InvalidArgumentError } from '@ids/engine';
import { checkInteger, invalidArgument, received } from '@ids/engine/internal';

/** What fencedSet needs of a Redis client (ioredis's `eval` fits). */
export interface EvalClient {
  /** EVAL: runs `script` with `numKeys` keys, then the arguments. */
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * Write KEYS[1] = ARGV[2] only if the fence ARGV[1] is not older than the one stored in KEYS[2],
 * then store it. Fences are compared as decimal strings (length, then digits), so no fence is
 * rounded through a Lua double. A fence equal to the stored one is accepted: it is the same
 * holder writing again. ARGV[3], when given, is an expiry in ms for both keys. Returns 1
 * written, 0 refused.
 */
export const FENCED_SET = `local function older(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local stored = redis.call('GET', KEYS[2])
if stored and older(ARGV[1], stored) then return 0 end
if ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1`;

/**
 * Sets `key` to `value` unless a write with a newer fence got there first; the fence is kept in
 * `<key>:fence` (same hash tag as `key` when `key` has one). Resolves true when written, false
 * when refused: a holder that gets false has lost the lock and must stop. With `expiryMs`, the
 * value and its fence expire together.
 *
 * Everything is checked before anything is sent: the script compares fences as decimal digits,
 * so a negative fence (`-1n`, which would pass as "newer" than 5 by its length) or a string
 * (`"06"`, which would pass as newer than 5 and then refuse 6) would break the order; and Redis
 * refuses a `PX` of 0 with a bare reply error.
 * @throws InvalidArgumentError for a fence that is not a bigint of 0 or more, a key or value that
 * is not a string, or an `expiryMs` that is not an integer from 1 to 2^53 - 1.
 */
export async function fencedSet(
  client: EvalClient,
  key: string,
  fence: bigint,
  value: string,
  expiryMs?: number,
): Promise<boolean> {
  if (typeof fence !== 'bigint' || fence < 0n) {
    throw new InvalidArgumentError(
      `expected a lock's fence, a bigint of 0 or more, received ${received(fence)}`,
      {
        option: 'fence',
      },
    );
  }
  for (const [option, text] of [
    ['key', key],
    ['value', value],
  ] as const) {
    if (typeof text !== 'string') {
      throw new InvalidArgumentError(`expected a string, received ${received(text)}`, { option });
    }
  }
  const expiry =
    expiryMs === undefined
      ? []
      : [checkInteger(expiryMs, 'expiryMs', 1, Number.MAX_SAFE_INTEGER, invalidArgument, true)];
  return (await client.eval(FENCED_SET, 2, key, `${key}:fence`, fence.toString(), value, ...expiry)) === 1;
}
