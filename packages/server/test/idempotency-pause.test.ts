// Idempotency-Key through two real ids-server processes on one real Redis, the first server
// SIGSTOPped in the middle of a batch past its key's lock lease (issue 34, item 1). A retry to
// the second server takes the key; whatever the first server does on waking, every answer the
// key gives carries the same IDs, and one batch is issued in full per key.
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { type BinRun, call, type Reply, scratch, startBin, WAIT_MS } from './helpers.js';

/** IDs issued so far by a server, summed over its slots (ids_issued_total). */
async function issued(run: BinRun): Promise<number> {
  const text = (await call(run.url, 'GET', '/metrics')).text;
  let sum = 0;
  for (const match of text.matchAll(/^ids_issued_total\{[^}]*\} (\d+)$/gm)) sum += Number(match[1]);
  return sum;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const batch = (run: BinRun, count: number, key: string) =>
  call(run.url, 'GET', `/ids?count=${count}`, { headers: { 'idempotency-key': key } });

/** The IDs of a 200, or undefined for any other answer (409, 503: no IDs). */
const idsOf = (reply: Reply): string | undefined =>
  reply.status === 200 ? JSON.stringify(reply.json.ids) : undefined;

/** Whether two answers carry the same IDs, said in a line (not two lists of 100,000 IDs). */
function sameIds(a: Reply, b: Reply): string {
  const x = new Set<string>(a.json?.ids ?? []);
  const y: string[] = b.json?.ids ?? [];
  const common = y.filter((id) => x.has(id)).length;
  return idsOf(a) === idsOf(b) ? 'the same IDs' : `${x.size} and ${y.length} IDs, ${common} in common`;
}

/**
 * One key: `a` gets the batch and is SIGSTOPped `offsetMs` later; meanwhile `b` is sent the
 * retry until it answers other than 409. `a` is resumed after `pauseMs`, and also only once `b`
 * answered when `untilAnswered` (else it may wake while `b` runs). Then a third request goes to
 * `third`. Returns the three answers and the IDs both servers issued meanwhile.
 */
async function pausedRound(
  a: BinRun,
  b: BinRun,
  third: BinRun,
  o: { key: string; count: number; offsetMs: number; pauseMs: number; untilAnswered: boolean },
) {
  const before = (await issued(a)) + (await issued(b));
  const first = batch(a, o.count, o.key);
  await sleep(o.offsetMs);
  a.child.kill('SIGSTOP');
  let second: Promise<Reply>;
  try {
    second = (async () => {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const reply = await batch(b, o.count, o.key);
        if (reply.status !== 409 || Date.now() > deadline) return reply;
        await sleep(50);
      }
    })();
    await Promise.all([sleep(o.pauseMs), o.untilAnswered ? second : undefined]);
  } finally {
    a.child.kill('SIGCONT');
  }
  const answers = { first: await first, second: await second, third: await batch(third, o.count, o.key) };
  return { ...answers, issued: (await issued(a)) + (await issued(b)) - before };
}

describe.skipIf(!hasRedis())('Idempotency-Key with two servers on one Redis, one paused mid-batch', () => {
  const redis = serverForSuite(startRedis);
  const runs: BinRun[] = [];
  /** Two servers on the Redis, on one claim directory (so with two machine IDs). */
  async function twoServers(env: Record<string, string>): Promise<[BinRun, BinRun]> {
    const claims = scratch();
    const start = () =>
      startBin({ IDS_CLAIM_DIR: claims, IDS_REDIS_URL: redis.server.url, IDS_MAX_COUNT: '100000', ...env });
    const pair: [BinRun, BinRun] = [await start(), await start()];
    runs.push(...pair);
    // The first lock on a Redis that may have forgotten its holders waits one lease (@ids/lock's
    // quarantine): taken here, so that no round waits it.
    expect((await batch(pair[0], 1, `warm-up-${runs.length}`)).status).toBe(200);
    return pair;
  }
  let shortLease: Promise<[BinRun, BinRun]> | undefined;
  /** The pair of servers whose keys' locks have a lease of 1 s, started once for the tests below. */
  const lockLeaseOfOneSecond = () => {
    shortLease ??= twoServers({ IDS_IDEMPOTENCY_LOCK_TTL_MS: '1000' });
    return shortLease;
  };
  afterAll(async () => {
    for (const run of runs) run.child.kill('SIGCONT');
    await Promise.all(runs.map((run) => run.stop()));
  });

  it("issue 34's case: 100,000 IDs, server A stopped 6 s on a 5 s lease, the retry to B; one set of IDs answered", async () => {
    const [a, b] = await twoServers({});
    const count = 100_000;
    const r = await pausedRound(a, b, b, {
      key: 'issue-34',
      count,
      offsetMs: 700,
      pauseMs: 6000,
      untilAnswered: false,
    });
    expect(r.second.status, r.second.text.slice(0, 300)).toBe(200);
    expect(new Set(r.second.json.ids).size).toBe(count);
    // Before the fix A resumed and answered 200 with its own 100,000 IDs (0 in common with B's),
    // not replayed: 200,000 IDs issued for one key. Now it answers B's IDs, or 409 while B runs
    // (or 503, its batch stopped, on a machine so slow that B had not yet taken the key).
    expect([200, 409, 503], r.first.text.slice(0, 300)).toContain(r.first.status);
    if (r.first.status === 200) {
      expect(sameIds(r.first, r.second)).toBe('the same IDs');
      expect(r.first.headers['idempotent-replayed']).toBe('true');
    }
    expect(sameIds(r.third, r.second)).toBe('the same IDs');
    expect(r.third.headers['idempotent-replayed']).toBe('true');
    console.log(
      `issue 34's case: B ${r.second.status}, A ${r.first.status}${r.first.headers['idempotent-replayed'] ? ' replayed' : ''}, retry ${r.third.status} replayed; ${r.issued} IDs issued for the key`,
    );
    // A's batch stopped when its lock's signal aborted: less than a second batch in all.
    expect(r.issued).toBeGreaterThanOrEqual(count);
    expect(r.issued).toBeLessThan(2 * count);
  });

  it('a batch whose lock ran out while its server was stopped, with no retry meanwhile: 503, nothing stored, the retry runs', async () => {
    const [a, b] = await lockLeaseOfOneSecond();
    const first = batch(a, 10_000, 'alone');
    await sleep(100);
    a.child.kill('SIGSTOP');
    await sleep(1600);
    a.child.kill('SIGCONT');
    const reply = await first;
    expect(reply.status, reply.text.slice(0, 300)).toBe(503);
    expect(reply.json.error.code).toBe('ERR_IDEMPOTENCY_LOCK_LOST');
    expect(reply.json.error.message).toMatch(
      /^expected this Idempotency-Key's lock to be held until its IDs were stored, received .+; its batch stopped and nothing was stored: retry$/,
    );
    expect(reply.headers['retry-after']).toBe('1');
    const retry = await batch(b, 10_000, 'alone');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(sameIds(await batch(a, 10_000, 'alone'), retry)).toBe('the same IDs');
  });

  it('20 rounds on a 1 s lease: every answer of a key carries the same IDs, one full batch per key', async () => {
    const [a, b] = await lockLeaseOfOneSecond();
    // 10,000 Sonyflake IDs take about 0.4 s: the pause lands 0-200 ms after the request, before
    // A's batch can have ended.
    const count = 10_000;
    const statuses: Record<string, number> = {};
    let answers = 0;
    let issuedAll = 0;
    for (let i = 0; i < 20; i++) {
      const key = `round-${i}`;
      const r = await pausedRound(a, b, i % 2 === 0 ? a : b, {
        key,
        count,
        offsetMs: (i % 5) * 50,
        pauseMs: 1200,
        // Half the rounds wake A once B answered (A's drop is refused), half at 1.2 s, while B
        // may still be running (A's answer is then 409).
        untilAnswered: i % 2 === 0,
      });
      const withIds: Reply[] = [];
      for (const [who, reply] of [
        ['first', r.first],
        ['second', r.second],
        ['third', r.third],
      ] as const) {
        const replayed = reply.headers['idempotent-replayed'] === 'true' ? ' replayed' : '';
        statuses[`${who} ${reply.status}${replayed}`] =
          (statuses[`${who} ${reply.status}${replayed}`] ?? 0) + 1;
        expect([200, 409, 503], `${key} ${who}: ${reply.text.slice(0, 300)}`).toContain(reply.status);
        if (reply.status === 200) withIds.push(reply);
      }
      answers += withIds.length;
      expect(r.third.status, key).toBe(200);
      expect(r.third.json.ids).toHaveLength(count);
      for (const reply of withIds) expect(sameIds(reply, r.third), key).toBe('the same IDs');
      expect(r.issued, `${key}: IDs issued`).toBeLessThan(2 * count);
      issuedAll += r.issued;
    }
    console.log(
      `20 rounds of ${count}: ${answers} answers with IDs, ${issuedAll} IDs issued (${(issuedAll / count).toFixed(2)} batches); ${JSON.stringify(statuses)}`,
    );
  });
});
