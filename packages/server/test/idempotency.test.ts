// Idempotency-Key on GET /ids through a real ids-server process and a real Redis: a retried
// batch gets the IDs of its first try, never new ones.
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BinRun,
  call,
  expectError,
  matchesSpec,
  type Reply,
  runBin,
  scratch,
  startBin,
} from './helpers.js';

/** IDs issued so far by the server, summed over its slots (ids_issued_total). */
async function issued(url: string): Promise<number> {
  const text = (await call(url, 'GET', '/metrics')).text;
  let sum = 0;
  for (const match of text.matchAll(/^ids_issued_total\{[^}]*\} (\d+)$/gm)) sum += Number(match[1]);
  return sum;
}

describe.skipIf(!hasRedis())('Idempotency-Key on GET /ids, with the server on Redis', () => {
  const redis = serverForSuite(startRedis);
  let run: BinRun;
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
  let doc: any;

  beforeAll(async () => {
    run = await startBin({ IDS_CLAIM_DIR: scratch(), IDS_REDIS_URL: redis.server.url });
    doc = (await call(run.url, 'GET', '/openapi.json')).json;
  });
  afterAll(async () => {
    await run?.stop();
  });

  /** GET /ids with the header (and a body), its reply checked against the document unless `unchecked`. */
  const batch = async (
    query: string,
    key: string | undefined,
    body?: string,
    unchecked = false,
  ): Promise<Reply> => {
    const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
    // node:http sends a GET's body only with its length declared.
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const reply = await call(run.url, 'GET', `/ids?${query}`, {
      headers,
      ...(body === undefined ? {} : { body }),
    });
    if (!unchecked) matchesSpec(doc, 'GET', '/ids', reply);
    return reply;
  };

  it('the document lists the header and the 409 and 422 answers of GET /ids', () => {
    const operation = doc.paths['/ids'].get;
    expect(operation.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '409', '422', '503']));
  });

  it('200 concurrent requests with one key: one batch taken, the same IDs in every 200, the rest 409', async () => {
    const before = await issued(run.url);
    // Checked against the document after, one of each status: compiling its schema 200 times
    // would only load the machine.
    const replies = await Promise.all(
      Array.from({ length: 200 }, () => batch('count=5', 'order-1', undefined, true)),
    );
    for (const status of new Set(replies.map((r) => r.status))) {
      matchesSpec(doc, 'GET', '/ids', replies.find((r) => r.status === status) as Reply);
    }
    const ok = replies.filter((r) => r.status === 200);
    const busy = replies.filter((r) => r.status === 409);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length + busy.length).toBe(200);
    const ids = (ok[0] as Reply).json.ids as string[];
    expect(ids).toHaveLength(5);
    for (const reply of ok) expect(reply.json.ids).toEqual(ids);
    for (const reply of busy) expectError(reply, 409, 'ERR_IDEMPOTENCY_IN_PROGRESS');
    // Exactly one execution: the server took 5 IDs in all, not 5 per 200 answer.
    expect((await issued(run.url)) - before).toBe(5);

    // A retry after completion: the same IDs again, marked as replayed, nothing taken.
    const retry = await batch('count=5', 'order-1');
    expect(retry.status).toBe(200);
    expect(retry.json.ids).toEqual(ids);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect((await issued(run.url)) - before).toBe(5);

    // Without the header every request takes new IDs (what the key prevents).
    const [a, b] = await Promise.all([batch('count=5', undefined), batch('count=5', undefined)]);
    expect(a?.json.ids).not.toEqual(b?.json.ids);
  });

  it('the same key with another query or body is 422; another key runs anew', async () => {
    const first = await batch('count=3&format=hex', 'order-2');
    expect(first.status).toBe(200);
    expectError(
      await batch('count=4&format=hex', 'order-2'),
      422,
      'ERR_IDEMPOTENCY_KEY_REUSED',
      /different one/,
    );
    expectError(await batch('count=3', 'order-2'), 422, 'ERR_IDEMPOTENCY_KEY_REUSED');
    expectError(await batch('count=3&format=hex', 'order-2', 'x'), 422, 'ERR_IDEMPOTENCY_KEY_REUSED');
    const other = await batch('count=3&format=hex', 'order-3');
    expect(other.status).toBe(200);
    expect(other.json.ids).not.toEqual(first.json.ids);
    // The first key still replays its own IDs, whatever the order of the same parameters.
    expect((await batch('format=hex&count=3', 'order-2')).json.ids).toEqual(first.json.ids);
  });

  it('GET /id with an Idempotency-Key is 400, not an ID: only GET /ids honours the key', async () => {
    const before = await issued(run.url);
    const headers = { 'idempotency-key': 'order-5' };
    const reply = await call(run.url, 'GET', '/id', { headers });
    matchesSpec(doc, 'GET', '/id', reply);
    // Before, the header was ignored: a retry with the key took a new ID.
    expectError(
      reply,
      400,
      'ERR_IDEMPOTENCY_NOT_SUPPORTED',
      /^expected no Idempotency-Key header on GET \/id, received one: only GET \/ids honours it/,
    );
    const head = await call(run.url, 'HEAD', '/id', { headers });
    expect(head.status).toBe(400);
    expect((await issued(run.url)) - before).toBe(0);
    expect((await call(run.url, 'GET', '/id')).status).toBe(200);
  });

  it('POST /tokens with an Idempotency-Key is 400 and takes no token: a retry would make a new one', async () => {
    const before = await issued(run.url);
    const reply = await call(run.url, 'POST', '/tokens', { headers: { 'idempotency-key': 'order-6' } });
    matchesSpec(doc, 'POST', '/tokens', reply);
    // Before, the header was ignored: each retry made (and stored) a new token.
    expectError(
      reply,
      400,
      'ERR_IDEMPOTENCY_NOT_SUPPORTED',
      /^expected no Idempotency-Key header on POST \/tokens/,
    );
    expect((await issued(run.url)) - before).toBe(0);
    expect((await call(run.url, 'POST', '/tokens')).status).toBe(201);
    // Reads answer the same with or without a key: not refused.
    expect(
      (await call(run.url, 'GET', '/layout', { headers: { 'idempotency-key': 'order-6' } })).status,
    ).toBe(200);
  });

  it('a malformed key is 400, and no IDs are taken for it', async () => {
    const before = await issued(run.url);
    expectError(await batch('count=2', ''), 400, 'ERR_INVALID_IDEMPOTENCY_KEY', /received an empty one/);
    expectError(
      await batch('count=2', 'k'.repeat(256)),
      400,
      'ERR_INVALID_IDEMPOTENCY_KEY',
      /256 characters/,
    );
    // A bad count is refused before the key is looked at: nothing recorded under it.
    expectError(await batch('count=0', 'order-4'), 400, 'ERR_INVALID_COUNT');
    expect((await batch('count=2', 'order-4')).status).toBe(200);
    expect((await issued(run.url)) - before).toBe(2);
  });
});

describe('Idempotency-Key on a server without Redis', () => {
  let run: BinRun;
  beforeAll(async () => {
    run = await startBin({ IDS_CLAIM_DIR: scratch() });
  });
  afterAll(async () => {
    await run?.stop();
  });

  it('is refused with 400 saying what to configure, not ignored; without it GET /ids works', async () => {
    const doc = (await call(run.url, 'GET', '/openapi.json')).json;
    const refused = await call(run.url, 'GET', '/ids?count=2', { headers: { 'idempotency-key': 'order-1' } });
    matchesSpec(doc, 'GET', '/ids', refused);
    expectError(refused, 400, 'ERR_IDEMPOTENCY_NOT_CONFIGURED', /--redis or IDS_REDIS_URL/);
    const plain = await call(run.url, 'GET', '/ids?count=2');
    expect(plain.status).toBe(200);
    expect(plain.json.ids).toHaveLength(2);
    // GET /id never honours the key, Redis or not.
    expectError(
      await call(run.url, 'GET', '/id', { headers: { 'idempotency-key': 'order-1' } }),
      400,
      'ERR_IDEMPOTENCY_NOT_SUPPORTED',
    );
  });

  it("refuses a lock lease for the key outside @ids/lock's range, before starting", async () => {
    const refused = await runBin({ IDS_CLAIM_DIR: scratch(), IDS_IDEMPOTENCY_LOCK_TTL_MS: '50' });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      /idempotencyLockTtlMs: expected an integer from 100 to 3,?600,?000, received 50/,
    );
  });
});
