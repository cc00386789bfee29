// The Lua scripts of the Redis locks: each reads and writes in one atomic step on the server.
// Keys of a name N under a prefix P, all in the hash slot of `{P}`:
//   {P}:held:N     the holder's token, SET PX ttl: the lock itself
//   {P}:fence:N    the last fence handed out (no TTL: fences must outlive the lock)
//   {P}:queue:N    waiters, a sorted set of tokens scored by arrival (server µs)
//   {P}:alive:N    the same waiters scored by when they stop counting (server ms) unless they ask again
//   {P}:epoch      when this Redis started handing out fences (server ms), see TAKE
//   {P}:released   the pub/sub channel a release or leave publishes on: `N/<next waiter's token>`
import { createHash } from 'node:crypto';

/** A script, the number of its KEYS, and its SHA1, by which Redis runs it once it has been loaded. */
export interface LuaScript {
  readonly keys: number;
  readonly lua: string;
  readonly sha: string;
}

function script(keys: number, lua: string): LuaScript {
  return { keys, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * Server time in ms and as a decimal µs string (exact: no float passes through it). Read only
 * where a script needs it (the line, or a new fence counter): TIME and the Lua around it were a
 * good part of an uncontended take's time on the server. Assigns `clock`, `nowms` and `nowus`,
 * which the script declares local (LOCALS) before its first use.
 */
const NOW = `clock = redis.call('TIME')
nowms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
nowus = clock[1] .. string.format('%06d', tonumber(clock[2]))`;
const LOCALS = 'local clock, nowms, nowus';

/**
 * Drops waiters that stopped asking, then reads the head of the line, from the queue and alive
 * keys named by `queue` and `alive` (Lua expressions: the KEYS entries of the script).
 */
const head = (
  queue: string,
  alive: string,
) => `local dead = redis.call('ZRANGEBYSCORE', ${alive}, '-inf', nowms)
for _, t in ipairs(dead) do redis.call('ZREM', ${queue}, t) end
redis.call('ZREMRANGEBYSCORE', ${alive}, '-inf', nowms)
local head = redis.call('ZRANGE', ${queue}, 0, 0)[1]`;

/**
 * Publishes the head of the line as next: on `{P}:released`, `N/<token>`, both read from the
 * held key's name `{P}:held:N` (a prefix holds no brace), so a release sends no channel or name
 * of its own: every argument is a cost on the hot path.
 */
const WAKE_HEAD = `if head then
  local base, name = string.match(KEYS[1], '^({[^}]*}):held:(.*)$')
  redis.call('PUBLISH', base .. ':released', name .. '/' .. head)
end`;

/**
 * Take the lock, or a place in line. KEYS: held, fence, queue, alive, epoch. ARGV: token, ttl ms,
 * and in one argument, read only where needed (each argument costs on the hot path),
 * `<the client's clock in µs>:<how long a waiter's place lasts without asking again, ms>:<1 to
 * join the line when refused, 0 for a single attempt>`.
 * Returns the fence, an integer, when taken with nothing to wait out; {fence, quarantine ms} when
 * taken in the first TTL after the epoch or with a fence past 2^53 (then read back as text);
 * 0 when not taken (and in line). One integer is what an uncontended take answers: the
 * cheapest reply to send and to read.
 *
 * A free lock with nobody in line (the queue key exists only while someone stands in it) is
 * taken by EXISTS, SET NX and INCR alone: no clock, no read of the line.
 *
 * The fence: INCR of {P}:fence:N. An INCR that answers 1 found the key missing (a new name, or a
 * Redis that restarted without persistence and forgot it): the counter then starts from the clock
 * in µs (the later of the server's and the client's), so it starts above any count the forgotten
 * key could have reached unless that name averaged more than one acquisition per µs. When the
 * epoch key is missing too, Redis forgot everything (or this prefix is new): a forgotten holder
 * may still be working, and fences by itself within one TTL, so a lock whose fence restarts in
 * the first TTL after the epoch is held for the rest of that TTL before use. The seed is SET and
 * then INCR'd by Redis, not added to in Lua, and a fence past 2^53 is read back as text: a Lua
 * number (a double) is exact only below that.
 */
export const TAKE = script(
  5,
  `local held = redis.call('EXISTS', KEYS[3]) == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
${LOCALS}
if not held then
  local cur = redis.call('GET', KEYS[1])
  if cur == ARGV[1] then return {redis.call('GET', KEYS[2]), 0} end
  ${NOW}
  ${head('KEYS[3]', 'KEYS[4]')}
  if cur or (head and head ~= ARGV[1]) then
    local place, join = string.match(ARGV[3], '^%d+:(%d+):([01])$')
    if join == '1' then
      redis.call('ZADD', KEYS[3], 'NX', nowus, ARGV[1])
      redis.call('ZADD', KEYS[4], nowms + tonumber(place), ARGV[1])
    end
    return 0
  end
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
local fence = redis.call('INCR', KEYS[2])
local quarantine = 0
if fence == 1 then
  if not clock then
    ${NOW}
  end
  local seed = nowus
  local clientus = string.match(ARGV[3], '^(%d+):')
  if tonumber(clientus) > tonumber(nowus) then seed = clientus end
  redis.call('SET', KEYS[2], seed)
  fence = redis.call('INCR', KEYS[2])
  local epoch = redis.call('GET', KEYS[5])
  if not epoch then
    epoch = tostring(nowms)
    redis.call('SET', KEYS[5], epoch)
  end
  quarantine = math.max(0, tonumber(epoch) + tonumber(ARGV[2]) - nowms)
end
if fence >= 9007199254740992 then return {redis.call('GET', KEYS[2]), quarantine} end
if quarantine > 0 then return {fence, quarantine} end
return fence`,
);

/** Compare-and-extend. KEYS: held. ARGV: token, ttl ms. Returns 1 extended, 0 not held by token. */
export const EXTEND = script(
  1,
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`,
);

/**
 * Compare-and-delete, then publish the next waiter's token so that it, and only it, asks at
 * once. With nobody in line nothing is read or published: no message reaches any process for an
 * uncontended lock. KEYS: held, queue, alive. ARGV: token.
 */
export const RELEASE = script(
  3,
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 0 then return 1 end
${LOCALS}
${NOW}
${head('KEYS[2]', 'KEYS[3]')}
${WAKE_HEAD}
return 1`,
);

/**
 * Leave the line; when that makes someone else the head of a free lock, wake them.
 * KEYS: held, queue, alive. ARGV: token.
 */
export const LEAVE = script(
  3,
  `local was = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if was ~= ARGV[1] or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
${LOCALS}
${NOW}
${head('KEYS[2]', 'KEYS[3]')}
${WAKE_HEAD}
return 1`,
);
