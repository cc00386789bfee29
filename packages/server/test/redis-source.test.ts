// The redis machine-ID source through the bin, against a real Redis on a free loopback port.
// Claims use a 2 s TTL: a fresh ID (no recorded time) is held back one TTL before use.
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BinRun, call, runBin, scratch, startBin } from './helpers.js';

const PREFIX = '{ids:machine-id}';

describe.skipIf(!hasRedis())('ids-server --machine-id-source redis', () => {
  const redis = serverForSuite(startRedis);
  let client: Redis;
  let runs: BinRun[] = [];
  /** The claim keys (not the recorded times, not the index). */
  const claimKeys = async () =>
    (await client.keys(`${PREFIX}:*`)).filter((key) => /^\{ids:machine-id\}:\d+$/.test(key)).sort();

  beforeAll(async () => {
    client = new Redis(redis.server.url);
    const env = {
      IDS_CLAIM_DIR: scratch(),
      IDS_MACHINE_ID_SOURCE: 'redis',
      IDS_MACHINE_ID_REDIS_URL: redis.server.url,
      IDS_MACHINE_ID_TTL_SECONDS: '2',
    };
    runs = await Promise.all([startBin(env, ['--machines', '2']), startBin(env, ['--machines', '2'])]);
  });
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.stop()));
    client?.disconnect();
  });

  it('two servers with --machines 2 hold four distinct IDs in Redis and serve unique IDs', async () => {
    const machines: number[][] = [];
    const ids: string[] = [];
    for (const run of runs) {
      const ready = await call(run.url, 'GET', '/health/ready');
      expect(ready.status, ready.text).toBe(200);
      machines.push(ready.json.machines.map((m: { machineId: number }) => m.machineId));
      expect(
        run.out().match(/slot \d: claimed machine ID \d+ in Redis at redis:\/\/127\.0\.0\.1:\d+ /g),
      ).toHaveLength(2);
      // Only the source uses this Redis: no token routes.
      expect((await call(run.url, 'POST', '/tokens')).status).toBe(404);
    }
    expect(new Set(machines.flat()).size).toBe(4);
    expect(await claimKeys()).toEqual(
      machines
        .flat()
        .map((id) => `${PREFIX}:${id}`)
        .sort(),
    );
    const replies = await Promise.all(
      runs.flatMap((run, r) =>
        Array.from({ length: 50 }, () =>
          call(run.url, 'GET', '/ids?count=100').then((reply) => ({ reply, r })),
        ),
      ),
    );
    for (const { reply, r } of replies) {
      expect(reply.status).toBe(200);
      ids.push(...reply.json.ids);
      // Sonyflake's machine field is the low 16 bits: each ID comes from its server's claims.
      for (const id of reply.json.ids) expect(machines[r]).toContain(Number(BigInt(id) & 0xffffn));
    }
    expect(ids).toHaveLength(2 * 50 * 100);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a claim key taken by another holder fences its slot: readiness false, then true after a new claim', async () => {
    const run = runs[0]!;
    const before = (await call(run.url, 'GET', '/health/ready')).json.machines[1].machineId as number;
    const key = `${PREFIX}:${before}`;
    // Another holder's value (same shape, another token) for 5 s, as one that found it free would.
    const value = JSON.parse((await client.get(key)) as string);
    await client.set(key, JSON.stringify({ ...value, token: 'f'.repeat(32), pid: 1 }), 'PX', 5000);
    const seen: string[] = [];
    let ready = await call(run.url, 'GET', '/health/ready');
    for (let i = 0; i < 400; i++) {
      const state = `${ready.status} ${ready.json.machines[1].state}`;
      if (seen.at(-1) !== state) seen.push(state);
      if (seen.includes('503 fenced') && ready.status === 200) break;
      // While slot 1 is fenced, slot 0 keeps serving.
      if (ready.status === 503) expect((await call(run.url, 'GET', '/id')).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 25));
      ready = await call(run.url, 'GET', '/health/ready');
    }
    expect(seen).toEqual(['200 held', '503 fenced', '200 held']);
    expect(ready.json.machines[1].state).toBe('held');
    const metrics = (await call(run.url, 'GET', '/metrics')).text;
    expect(metrics).toContain('ids_claim_fences_total{slot="1"} 1');
    expect(metrics).toContain('ids_claim_renewals_total{slot="1"} 1');
    expect(run.err()).toMatch(/ERR_IDS_/);
  });

  it('SIGTERM releases every claim: no claim key is left', async () => {
    expect(await Promise.all(runs.map((run) => run.stop()))).toEqual([0, 0]);
    // The other holder's key set by the previous test may still be there until its 5 s pass.
    const left = await claimKeys();
    for (const key of left) expect(JSON.parse((await client.get(key)) as string).token).toBe('f'.repeat(32));
    expect(left.length).toBeLessThanOrEqual(1);
  });

  it('without a Redis URL it refuses to start (exit 2)', async () => {
    const bad = await runBin({ IDS_CLAIM_DIR: scratch() }, ['--machine-id-source', 'redis']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(
      /machine-id-source redis: expected where the store is \(IDS_MACHINE_ID_REDIS_URL or IDS_REDIS_URL\), received none/,
    );
    const ttl = await runBin({ IDS_CLAIM_DIR: scratch(), IDS_MACHINE_ID_REDIS_URL: redis.server.url }, [
      '--machine-id-source',
      'redis',
      '--machine-id-ttl',
      '0',
    ]);
    expect(ttl.code).toBe(2);
    expect(ttl.err).toMatch(/machineIdTtlSeconds: expected an integer from 1 to 86400, received 0/);
  });
});
