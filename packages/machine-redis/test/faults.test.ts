// A Redis that is down, frozen, killed mid-run, or refuses us: typed errors within timeoutMs,
// never a hang; a running holder fences within the TTL and resumes when Redis returns.
import { readFileSync } from 'node:fs';
import { MachineIdLostError, MachineIdProviderError } from '@ids/engine';
import { freePort, hasOpenssl, hasRedis, selfSignedTls, startRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  LeaseLostError,
  LeaseStoreRefusedError,
  redisMachineId,
  StoreUnavailableError,
} from '../src/index.js';
import {
  aborted,
  claim,
  cleanupAfterEach,
  failure,
  FAST_LEASE as fast,
  freshPrefix,
  generatorOn,
  layoutWith,
  MARGIN_MS,
  sleep,
  TTL_MS,
  timerRuns,
  until,
  WAIT_MS,
} from './helpers.js';

const cleanup = cleanupAfterEach();

describe.skipIf(!hasRedis())(
  'a Redis that cannot answer: StoreUnavailableError within timeoutMs, never a hang',
  () => {
    it('nothing listening (Redis down at start)', async () => {
      const port = await freePort();
      const t0 = performance.now();
      const error = await failure(claim(layoutWith(4), { url: `redis://127.0.0.1:${port}`, ...fast }));
      expect(performance.now() - t0).toBeLessThan(fast.timeoutMs + 500);
      expect(error).toBeInstanceOf(MachineIdProviderError);
      expect(error.cause).toBeInstanceOf(StoreUnavailableError);
      expect((error.cause as StoreUnavailableError).code).toBe('ERR_IDS_STORE_UNAVAILABLE');
      expect((error.cause as Error).message).toMatch(
        /claiming .* did not answer within 1000 ms.*ECONNREFUSED/,
      );
    });

    it('a server that never answers (frozen with SIGSTOP)', async () => {
      const redis = await startRedis({ allowExternal: false });
      cleanup.push(() => redis.close());
      redis.pause();
      const t0 = performance.now();
      const error = await failure(claim(layoutWith(4), { url: redis.url, ...fast }));
      expect(performance.now() - t0).toBeLessThan(fast.timeoutMs + 500);
      expect(error.cause).toBeInstanceOf(StoreUnavailableError);
      redis.resume();
    });
  },
);

describe.skipIf(!hasRedis())('Redis killed mid-run', () => {
  it('fences within TTL minus the margin, refuses meanwhile, and resumes when Redis returns (empty: after one TTL of quarantine)', async () => {
    const redis = await startRedis({ allowExternal: false });
    cleanup.push(() => redis.close());
    const layout = layoutWith(4);
    const held = await claim(layout, { url: redis.url, prefix: freshPrefix('killed'), ...fast });
    const gen = generatorOn(layout, held);
    cleanup.push(() => gen.close().catch(() => undefined));
    const issued: { at: number; id: bigint }[] = [];
    const refused: unknown[] = [];
    let running = true;
    const pump = (async () => {
      while (running) {
        await gen.nextId().then(
          (id) => issued.push({ at: performance.now(), id }),
          (error) => refused.push(error),
        );
        await sleep(2);
      }
    })();
    await sleep(300);
    const killedAt = performance.now();
    // The budget, as this process's timers run (late, on a busy machine: the keeper's as much).
    const budget = timerRuns(TTL_MS - MARGIN_MS);
    await redis.kill();
    const fencedAt = await aborted(held.signal);
    expect(fencedAt).toBeLessThan((await budget) + 50);
    expect(held.signal.reason).toBeInstanceOf(LeaseLostError);
    await sleep(TTL_MS + 500); // down for longer than the TTL
    const before = issued.length;
    // From when the start began: the holder may claim before start() has seen Redis ready.
    const restartedAt = performance.now();
    await redis.start();
    await until(() => issued.length > before + 10, WAIT_MS, 'IDs after Redis returned');
    const resumedAt = issued[before]!.at;
    running = false;
    await pump;
    expect(issued.filter((i) => i.at > fencedAt && i.at < restartedAt)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0); // calls were made meanwhile (as often as a busy machine allows)
    for (const r of refused) expect(r).toBeInstanceOf(MachineIdLostError);
    const ids = issued.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    // The restarted Redis forgot the claim and its time: one TTL of quarantine before issuing.
    expect(resumedAt - restartedAt).toBeGreaterThanOrEqual(TTL_MS - 50);
    console.log(
      `Redis kill: fenced ${Math.round(fencedAt - killedAt)} ms after the kill (budget ${TTL_MS - MARGIN_MS} ms); resumed ${Math.round(resumedAt - restartedAt)} ms after Redis returned empty`,
    );
  });
});

describe.skipIf(!hasRedis())('credentials and TLS', () => {
  it('a password (requirepass) and an ACL user in the URL are accepted; a wrong password is LeaseStoreRefusedError at once', async () => {
    const redis = await startRedis({ allowExternal: false, password: 's3cret' });
    cleanup.push(() => redis.close());
    const admin = (await import('ioredis')).Redis;
    const client = new admin(redis.url);
    await client.call('ACL', 'SETUSER', 'fleet', 'on', '>fleet-pass', '~*', '+@all');
    client.disconnect();
    const layout = layoutWith(4);
    const withPassword = await claim(layout, { url: redis.url, prefix: freshPrefix('auth'), ...fast });
    await withPassword.release();
    const asUser = await claim(layout, {
      url: `redis://fleet:fleet-pass@127.0.0.1:${redis.port}`,
      prefix: freshPrefix('acl'),
      ...fast,
    });
    await asUser.release();
    for (const url of [`redis://:wrong@127.0.0.1:${redis.port}`, `redis://127.0.0.1:${redis.port}`]) {
      const t0 = performance.now();
      const error = await failure(claim(layout, { url, prefix: freshPrefix('bad-auth'), ...fast }));
      expect(error.cause, url).toBeInstanceOf(LeaseStoreRefusedError);
      expect((error.cause as LeaseStoreRefusedError).code).toBe('ERR_IDS_LEASE_STORE_REFUSED');
      expect((error.cause as Error).message).toMatch(/WRONGPASS|NOAUTH/);
      expect(performance.now() - t0).toBeLessThan(fast.timeoutMs);
    }
  });

  it.skipIf(!hasOpenssl())(
    'rediss:// to a TLS redis-server with a self-signed CA: accepted with the CA, LeaseStoreRefusedError (certificate) without it',
    async () => {
      const tls = selfSignedTls();
      cleanup.push(async () => tls.remove());
      const tlsPort = await freePort();
      const redis = await startRedis({
        allowExternal: false,
        args: [
          '--tls-port',
          String(tlsPort),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          '--tls-auth-clients',
          'no',
        ],
      });
      cleanup.push(() => redis.close());
      const url = `rediss://127.0.0.1:${tlsPort}`;
      const layout = layoutWith(4);
      const held = await claim(layout, {
        url,
        redisOptions: { tls: { ca: readFileSync(tls.caFile) } },
        prefix: freshPrefix('tls'),
        ...fast,
      });
      expect(held.machineId).toBeGreaterThanOrEqual(0);
      await held.release();
      const error = await failure(claim(layout, { url, prefix: freshPrefix('tls-untrusted'), ...fast }));
      expect(error.cause).toBeInstanceOf(LeaseStoreRefusedError);
      expect((error.cause as Error).message).toMatch(/refused the TLS connection/);
    },
  );
});

describe('bad options: InvalidArgumentError naming the option, at once, nothing sent', () => {
  it.each([
    ['url', 'http://127.0.0.1:6379'],
    ['url', 'redis://'],
    ['url', 'redis://127.0.0.1:6379/x'],
    ['url', 'redis://127.0.0.1:6379?db=1'],
    ['url', 'not a url'],
    ['url', 42],
    ['prefix', ''],
    ['prefix', 'has space'],
    ['prefix', 'ends:'],
    ['prefix', '{tag}'],
    ['prefix', 7],
    ['ttlSeconds', 0],
    ['fenceMarginMs', -1],
    ['timeoutMs', 0],
    ['bits', 31],
    ['probes', 65],
    ['recordIntervalMs', 0],
  ])('%s: %j', (option, value) => {
    let error: unknown;
    try {
      redisMachineId({ [option]: value } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'ERR_IDS_INVALID_ARGUMENT', option });
  });

  it('a client and a URL together, and a client that is not ioredis', () => {
    expect(() => redisMachineId({ client: {} as never })).toThrow(
      /client: expected an ioredis Redis or Cluster/,
    );
  });

  it('IDS_REDIS_URL is named when it is malformed', async () => {
    const { connectionUrl } = await import('../src/options.js');
    expect(() => connectionUrl({}, { IDS_REDIS_URL: 'http://x' })).toThrow(
      /IDS_REDIS_URL: expected redis:\/\//,
    );
    expect(connectionUrl({}, { IDS_REDIS_URL: 'redis://h:1' })).toBe('redis://h:1');
    expect(connectionUrl({}, {})).toBe('redis://127.0.0.1:6379');
  });
});
