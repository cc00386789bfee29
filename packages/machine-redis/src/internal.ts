// @ids/machine-redis/internal: the one rule of this store for sorting a failure into "unavailable"
// (waiting may help) or "refused" (it will not), for the other packages of @ids that talk to
// Redis (@ids/lock, @ids/segment, @ids/server), and the one way they open a client of their own
// (URL checked, database verified). Not API: it may change in any release.
export { redisFailure } from './connection.js';
export { openRedisClient, parseRedisUrl, type RedisUrl } from './url.js';
