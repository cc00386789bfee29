// The Lua scripts behind each store operation: each reads and writes in one atomic step on the
// server, so a claim, a keepalive or a release never acts on a key another holder took meanwhile.
// `redis.pcall` for reads: a key of the wrong type (a hash where a claim should be) is reported
// as garbage, not as a script error.

/** Milliseconds on the server's clock, for the index's expiry scores. */
const NOW = `local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)`;

/**
 * Create-if-absent. KEYS: claim, time, index. ARGV: value, ttl ms, id, time to record when none is.
 * Returns {1, time} held, {2, time} held with no recorded past (the time written now),
 * {0, holder} taken, {3, what} garbage (nothing written).
 */
export const CREATE = `local t = redis.pcall('GET', KEYS[2])
if type(t) == 'table' or (t and not string.match(t, '^%d+$')) then return {3, 'time'} end
local cur = redis.pcall('GET', KEYS[1])
if type(cur) == 'table' then return {3, 'claim'} end
if cur == ARGV[1] then return {1, t or ''} end
if cur then return {0, cur} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
${NOW}
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[3])
if not t then
  redis.call('SET', KEYS[2], ARGV[4])
  return {2, ARGV[4]}
end
return {1, t}`;

/**
 * Compare-and-extend of every claim of one token, in one script (one round trip per keepalive
 * whatever the number of claims). KEYS: index, then the claims. ARGV: value, ttl ms, then the
 * IDs in the order of their claims. Returns the IDs whose claim no longer carries the value;
 * every other claim was extended.
 */
export const EXTEND_ALL = `${NOW}
local lost = {}
local expiry = now + tonumber(ARGV[2])
local scored = {}
for i = 2, #KEYS do
  if redis.pcall('GET', KEYS[i]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    scored[#scored + 1] = expiry
    scored[#scored + 1] = ARGV[i + 1]
  else
    lost[#lost + 1] = ARGV[i + 1]
  end
  -- The index in one ZADD per 500 claims, not one per claim (and within Lua's argument limit).
  if #scored >= 1000 or (i == #KEYS and #scored > 0) then
    redis.call('ZADD', KEYS[1], unpack(scored))
    scored = {}
  end
end
return lost`;

/** Compare-and-delete. KEYS: claim, index. ARGV: value, id. Returns 1 deleted, 0 not ours. */
export const DELETE = `if redis.pcall('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1`;

/**
 * Record the time, kept only if later, while the claim is ours. KEYS: claim, time. ARGV: value,
 * ms. Returns 1 done, 0 not ours, -1 the time key holds garbage (left as it is).
 */
export const WRITE_TIME = `if redis.pcall('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local t = redis.pcall('GET', KEYS[2])
if type(t) == 'table' or (t and not string.match(t, '^%d+$')) then return -1 end
if not t or tonumber(t) < tonumber(ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2]) end
return 1`;

/**
 * The IDs with a live claim. KEYS: index. Drops expired entries first; nil when the index is not
 * a sorted set. Returns {count, the members joined by commas}: one string, not one reply per
 * member, because a listing comes when the field is dense, and at 16,384 claims parsing that
 * many replies cost the claimer more than Redis spent on the listing.
 */
export const LIST = `if redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' and redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
return {#members, table.concat(members, ',')}`;
