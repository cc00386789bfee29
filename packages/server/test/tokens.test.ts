// Idempotency tokens against a real Redis (started on a free loopback port), through the bin.
import { Agent } from 'node:http';
import { StoreUnavailableError } from '@ids/engine';
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOKEN_PREFIX, redisTokenStore } from '../src/index.js';
import {
  type BinRun,
  call,
  expectError,
  matchesSpec,
  pollUntil,
  runBin,
  scratch,
  startBin,
} from './helpers.js';

describe.skipIf(!hasRedis())('idempotency tokens on Redis', () => {
  const redis = serverForSuite(startRedis);
  let run: BinRun;
  let client: Redis;
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
  let doc: any;

  beforeAll(async () => {
    run = await startBin({
      IDS_CLAIM_DIR: scratch(),
      IDS_REDIS_URL: redis.server.url,
      IDS_TOKEN_TTL_SECONDS: '60',
    });
    client = new Redis(redis.server.url);
    doc = (await call(run.url, 'GET', '/openapi.json')).json;
  });
  afterAll(async () => {
    client?.disconnect();
    await run?.stop();
  });

  const issue = async (query = '') => {
    const reply = await call(run.url, 'POST', `/tokens${query}`);
    matchesSpec(doc, 'POST', '/tokens', reply);
    return reply;
  };
  const consume = async (token: string, agent?: Agent) => {
    const reply = await call(run.url, 'DELETE', `/tokens/${token}`, agent ? { agent } : {});
    matchesSpec(doc, 'DELETE', '/tokens/{token}', reply);
    return reply;
  };

  it('the document describes the token routes and stays valid', async () => {
    expect((await new Validator().validate(doc)).valid).toBe(true);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/tokens', '/tokens/{token}']));
  });

  it('POST /tokens issues an ID as a token, stored with its TTL', async () => {
    const reply = await issue();
    expect(reply.status).toBe(201);
    expect(reply.json.token).toMatch(/^[1-9][0-9]*$/);
    expect(reply.json.ttlSeconds).toBe(60);
    expect(Date.parse(reply.json.expiresAt) - Date.now()).toBeGreaterThan(55_000);
    const key = `${DEFAULT_TOKEN_PREFIX}${reply.json.token}`;
    expect(await client.get(key)).toBe('issued');
    const ttl = await client.ttl(key);
    expect(ttl).toBeGreaterThan(55);
    expect(ttl).toBeLessThanOrEqual(60);
    const short = await issue('?ttl=5');
    expect(short.json.ttlSeconds).toBe(5);
    expect(await client.ttl(`${DEFAULT_TOKEN_PREFIX}${short.json.token}`)).toBeLessThanOrEqual(5);
  });

  it('100 concurrent consumers of one token: exactly one 204, 99 409; later ones 409 too', async () => {
    const { json } = await issue();
    const agent = new Agent({ keepAlive: true, maxSockets: 100 });
    const replies = await Promise.all(Array.from({ length: 100 }, () => consume(json.token, agent)));
    agent.destroy();
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(99);
    for (const reply of replies.filter((r) => r.status === 409)) {
      expectError(reply, 409, 'ERR_TOKEN_USED', new RegExp(`token ${json.token} was already consumed`));
    }
    expect(replies.find((r) => r.status === 204)?.text).toBe('');
    expectError(await consume(json.token), 409, 'ERR_TOKEN_USED');
  });

  it('each of 20 tokens consumed by 5 racers has exactly one winner', async () => {
    const tokens = await Promise.all(Array.from({ length: 20 }, () => issue()));
    const agent = new Agent({ keepAlive: true, maxSockets: 100 });
    const replies = await Promise.all(
      tokens.flatMap((t) =>
        Array.from({ length: 5 }, () => consume(t.json.token, agent).then((r) => [t.json.token, r.status])),
      ),
    );
    agent.destroy();
    const wins = new Map<string, number>();
    for (const [token, status] of replies)
      if (status === 204) wins.set(token as string, (wins.get(token as string) ?? 0) + 1);
    expect(wins.size).toBe(20);
    expect([...wins.values()].every((n) => n === 1)).toBe(true);
  });

  it('an unknown or expired token is a 404', async () => {
    expectError(await consume('12345'), 404, 'ERR_TOKEN_UNKNOWN', /token 12345 is unknown or expired/);
    const { json } = await issue();
    // Redis expires it (a TTL cut short stands in for waiting out the hour).
    await client.pexpire(`${DEFAULT_TOKEN_PREFIX}${json.token}`, 1);
    for (let i = 0; i < 50 && (await client.exists(`${DEFAULT_TOKEN_PREFIX}${json.token}`)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expectError(await consume(json.token), 404, 'ERR_TOKEN_UNKNOWN');
  });

  it.each([
    ['DELETE', '/tokens/abc', 400, 'ERR_INVALID_TOKEN'],
    ['DELETE', '/tokens/0', 400, 'ERR_INVALID_TOKEN'],
    ['DELETE', `/tokens/${'9'.repeat(20)}`, 400, 'ERR_INVALID_TOKEN'],
    ['POST', '/tokens?ttl=0', 400, 'ERR_INVALID_TTL'],
    ['POST', '/tokens?ttl=999999', 400, 'ERR_INVALID_TTL'],
    ['POST', '/tokens?ttl=x', 400, 'ERR_INVALID_TTL'],
    ['POST', '/tokens?count=1', 400, 'ERR_UNKNOWN_PARAMETER'],
    ['GET', '/tokens', 405, 'ERR_METHOD_NOT_ALLOWED'],
    ['POST', '/tokens/1', 405, 'ERR_METHOD_NOT_ALLOWED'],
  ])('%s %s is a %i %s', async (method, path, status, code) => {
    expectError(await call(run.url, method, path), status, code);
  });

  it('Redis down: 503 ERR_IDS_STORE_UNAVAILABLE (the one store error) at once (no hang); back when Redis is', async () => {
    if (redis.server.external) return;
    const { json } = await issue();
    await redis.server.stop();
    const t0 = performance.now();
    const down = await call(run.url, 'POST', '/tokens');
    expectError(
      down,
      503,
      'ERR_IDS_STORE_UNAVAILABLE',
      /^redis: tokens: storing a token: Redis at 127\.0\.0\.1:\d+ is unavailable/,
    );
    expectError(
      await call(run.url, 'DELETE', `/tokens/${json.token}`),
      503,
      'ERR_IDS_STORE_UNAVAILABLE',
      /^redis: tokens: consuming a token: /,
    );
    expect(performance.now() - t0).toBeLessThan(2000);
    // IDs do not depend on Redis.
    expect((await call(run.url, 'GET', '/id')).status).toBe(200);
    await redis.server.start();
    const back = await pollUntil(
      () => call(run.url, 'POST', '/tokens'),
      (reply) => reply.status === 201,
    );
    expect(back.status).toBe(201);
    client.disconnect();
    client = new Redis(redis.server.url);
  });
});

// Issue 22 item 3: the database in the URL was dropped to 0 when the server did not have it.
describe.skipIf(!hasRedis())('the database in IDS_REDIS_URL', () => {
  const redis = serverForSuite(startRedis);

  it.each([
    ['99', /ERR_IDS_REDIS_DATABASE: .*received database 99: the server has databases 0 to 15/],
    [
      'abc',
      /ERR_IDS_INVALID_ARGUMENT: url: the database of .*: expected a database number from 0 to 2,147,483,647, received "abc"/,
    ],
  ])('database %s: the start stops with exit 1 and the typed error', async (db, message) => {
    const result = await runBin({
      PORT: '0',
      IDS_MACHINE_ID: '1',
      IDS_REDIS_URL: `${redis.server.url}/${db}`,
    });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(message);
    expect(result.out).not.toMatch(/listening/);
  });
});

describe.skipIf(!hasRedis())('a Redis that cannot be reached at start', () => {
  it('stops the start with exit 1 and says why', async () => {
    const redis = await startRedis({ allowExternal: false });
    const url = redis.url;
    await redis.close();
    const result = await runBin({ PORT: '0', IDS_MACHINE_ID: '1', IDS_REDIS_URL: url });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /ERR_IDS_STORE_UNAVAILABLE: redis: tokens: connecting: Redis at 127\.0\.0\.1:\d+ is unavailable/,
    );
    expect(result.out).not.toMatch(/listening/);
  });

  it('redisTokenStore: StoreUnavailableError with store redis and feature token, at connect and per call', async () => {
    const redis = await startRedis({ allowExternal: false });
    const url = redis.url;
    try {
      const tokens = await redisTokenStore(url, { connectTimeoutMs: 2000 });
      try {
        await tokens.issue('1', 60);
        await redis.stop();
        for (const failure of [
          await rejection(tokens.issue('2', 60)),
          await rejection(tokens.consume('1')),
        ]) {
          expect(failure).toBeInstanceOf(StoreUnavailableError);
          expect(failure).toMatchObject({
            code: 'ERR_IDS_STORE_UNAVAILABLE',
            store: 'redis',
            feature: 'token',
          });
        }
      } finally {
        await tokens.close();
      }
      const atConnect = await rejection(redisTokenStore(url, { connectTimeoutMs: 2000 }));
      expect(atConnect).toBeInstanceOf(StoreUnavailableError);
      expect(atConnect).toMatchObject({ store: 'redis', feature: 'token' });
    } finally {
      await redis.close();
    }
  });
});

/** The rejection of `promise`; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
}
