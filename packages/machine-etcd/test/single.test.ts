// Against one real etcd server, what is etcd's own: the check, the key and lease of a claim, the
// requests a dense field takes, garbage under the prefix, a lease revoked by an operator, and an
// etcd that cannot be reached. What every lease store keeps is the contract (contract.test.ts).
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { MachineIdRejectedError, resolveMachineId } from '@ids/engine';
import { freePort } from '@ids/test-services';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  etcdCheckMachineId,
  LeaseCorruptClaimError,
  LeaseLostError,
  StoreUnavailableError,
} from '../src/index.js';
import {
  aborted,
  adminClient,
  claim,
  etcdForSuite,
  failure,
  freshPrefix,
  generatorOn,
  layoutWith,
  until,
} from './helpers.js';

const suite = etcdForSuite();

const fast = { ttlSeconds: 2, fenceMarginMs: 500 } as const;
const identity = () => JSON.stringify({ host: 'elsewhere', pid: 1, started: '2020-01-01T00:00:00.000Z' });

/** A generator on a claim of the fast settings, in a field of `bits` bits on a fresh prefix named for `name`. */
async function fastGenerator(name: string, bits: number) {
  const prefix = freshPrefix(name);
  const layout = layoutWith(bits);
  const held = await claim(layout, { endpoints: suite.server.endpoints, prefix, ...fast });
  return { prefix, held, gen: generatorOn(layout, held) };
}

async function leaseOf(key: string): Promise<string | undefined> {
  const reply = await suite.admin.get(key).exec();
  return reply.kvs[0]?.lease;
}

describe('etcdCheckMachineId', () => {
  it('creates <prefix>/<id> under a lease with host, pid and start time; true for its own key, false for another owner', async () => {
    const prefix = freshPrefix('check');
    const a = etcdCheckMachineId({ endpoints: suite.server.endpoints, prefix, ...fast });
    const b = etcdCheckMachineId({ endpoints: suite.server.endpoints, prefix, ...fast });
    try {
      expect(await a(7)).toBe(true);
      const value = JSON.parse((await suite.admin.get(`${prefix}/7`).string())!);
      expect(value).toEqual({ host: hostname(), pid: process.pid, started: expect.any(String) });
      expect(Math.abs(Date.parse(value.started) - (Date.now() - process.uptime() * 1000))).toBeLessThan(1000);
      expect(await leaseOf(`${prefix}/7`)).not.toBe('0');
      expect(await a(7)).toBe(true); // already ours
      expect(await b(7)).toBe(false);
      expect(await b(8)).toBe(true);
      await a.close();
      expect(await suite.admin.get(`${prefix}/7`).string()).toBeNull(); // freed at once
      expect(await b(7)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses an ID held elsewhere the way Go does: the generator is not built', async () => {
    const prefix = freshPrefix('check-gen');
    const other = etcdCheckMachineId({ endpoints: suite.server.endpoints, prefix, ...fast });
    const mine = etcdCheckMachineId({ endpoints: suite.server.endpoints, prefix, ...fast });
    try {
      await other(12);
      await expect(resolveMachineId(layoutWith(16), 12, mine)).rejects.toBeInstanceOf(MachineIdRejectedError);
      expect(await resolveMachineId(layoutWith(16), 13, mine)).toBe(13);
    } finally {
      await other.close();
      await mine.close();
    }
  });

  it('keeps its lease alive past the TTL, and aborts its signal when the lease is revoked behind its back', async () => {
    const prefix = freshPrefix('check-lease');
    const check = etcdCheckMachineId({
      endpoints: suite.server.endpoints,
      prefix,
      ...fast,
    });
    try {
      expect(await check(3)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(check.signal.aborted).toBe(false);
      const lease = await leaseOf(`${prefix}/3`);
      expect(lease).toBeDefined();
      const signal = check.signal;
      await suite.admin.leaseClient.leaseRevoke({ ID: lease! });
      await aborted(signal);
      expect(signal.reason).toBeInstanceOf(LeaseLostError);
      expect((signal.reason as LeaseLostError).kind).toBe('lease-expired');
      // A later call takes a new lease.
      expect(await check(3)).toBe(true);
      expect(await leaseOf(`${prefix}/3`)).not.toBe(lease);
    } finally {
      await check.close();
    }
  });

  it('a key holding garbage: LeaseCorruptClaimError naming the key and what it holds', async () => {
    const prefix = freshPrefix('check-garbage');
    await suite.admin.put(`${prefix}/9`).value('banana');
    const check = etcdCheckMachineId({ endpoints: suite.server.endpoints, prefix, ...fast });
    try {
      const error = await failure(check(9));
      expect(error).toBeInstanceOf(LeaseCorruptClaimError);
      expect((error as LeaseCorruptClaimError).code).toBe('ERR_IDS_LEASE_CORRUPT_CLAIM');
      expect((error as LeaseCorruptClaimError).key).toBe(`${prefix}/9`);
      expect((error as Error).message).toMatch(
        /holds "banana" \(string\): expected the JSON identity of its holder/,
      );
    } finally {
      await check.close();
    }
  });
});

describe('etcdMachineId', () => {
  it('the claim is <prefix>/<id>, bound to the lease it reports; release revokes the lease rather than leave it to expire', async () => {
    const prefix = freshPrefix('claim');
    const held = await claim(layoutWith(10), { endpoints: suite.server.endpoints, prefix, ...fast });
    expect(held.key).toBe(`${prefix}/${held.machineId}`);
    expect(await leaseOf(held.key)).toBe(held.leaseId);
    await held.release();
    const ttl = await suite.admin.leaseClient.leaseTimeToLive({ ID: held.leaseId, keys: false });
    expect(Number(ttl.TTL)).toBe(-1);
  });

  it('a nearly full field takes a listing, not thousands of probes: the last of 1,024 IDs in two writes and a listing', async () => {
    const prefix = freshPrefix('dense');
    const lease = await suite.admin.leaseClient.leaseGrant({ TTL: 60, ID: 0 });
    const free = 777;
    const puts = [];
    for (let id = 0; id < 1024; id++) {
      if (id !== free) puts.push(suite.admin.put(`${prefix}/${id}`).value(identity()).lease(lease.ID).exec());
    }
    await Promise.all(puts);
    // Count what the claimer asks etcd, through a client that tallies transactions and listings.
    const client = adminClient(suite.server.endpoints);
    const tally = { txn: 0, range: 0 };
    const counting = new Proxy(client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property === 'if') {
          return (...args: Parameters<Etcd3['if']>) => {
            tally.txn++;
            return target.if(...args);
          };
        }
        if (property === 'kv') {
          const kv = value as Etcd3['kv'];
          return new Proxy(kv, {
            get(k, p) {
              const member = Reflect.get(k, p);
              if (p !== 'range') return member;
              return (...args: Parameters<Etcd3['kv']['range']>) => {
                tally.range++;
                return k.range(...args);
              };
            },
          });
        }
        return value;
      },
    });
    try {
      const held = await claim(layoutWith(10), { client: counting, prefix, ...fast });
      expect(held.machineId).toBe(free);
      // One probe, which reads the other two probes' keys and finds them taken, two pages of
      // listing, one claim: two transactions that may write (each synced to disk), not four.
      // (A probe that lands on the free ID, 3 in 1,024, skips the listing.)
      expect(tally.txn).toBeLessThanOrEqual(2);
      expect(tally.range).toBeLessThanOrEqual(2);
      await held.release();
      // A client given to us is not closed by release.
      expect(await client.get(`${prefix}/0`).string()).toBe(identity());
    } finally {
      await suite.admin.leaseClient.leaseRevoke({ ID: lease.ID });
      client.close();
    }
  });

  it('garbage under the prefix (a value, a key name, a recorded time): LeaseCorruptClaimError naming the key', async () => {
    const layout = layoutWith(1);
    const valueGarbage = freshPrefix('garbage-value');
    await suite.admin.put(`${valueGarbage}/0`).value('{"not":"an owner"}');
    await suite.admin.put(`${valueGarbage}/1`).value(identity());
    const e1 = await failure(
      claim(layout, { endpoints: suite.server.endpoints, prefix: valueGarbage, ...fast }),
    );
    expect(e1.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((e1.cause as LeaseCorruptClaimError).key).toBe(`${valueGarbage}/0`);
    expect((e1.cause as Error).message).toMatch(/holds "\{\\"not\\":\\"an owner\\"\}"/);

    const nameGarbage = freshPrefix('garbage-name');
    await suite.admin.put(`${nameGarbage}/00`).value(identity());
    const e2 = await failure(
      claim(layoutWith(0), {
        endpoints: suite.server.endpoints,
        prefix: nameGarbage,
        probes: 0,
      }),
    );
    expect(e2.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((e2.cause as Error).message).toMatch(/is not <prefix>\/<machine id>.*received "00"/);

    const timeGarbage = freshPrefix('garbage-time');
    await suite.admin.put(`${timeGarbage}/time/0`).value('yesterday');
    const e3 = await failure(
      claim(layoutWith(0), { endpoints: suite.server.endpoints, prefix: timeGarbage }),
    );
    expect(e3.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((e3.cause as Error).message).toMatch(
      /recorded time .*time\/0 holds "yesterday".*decimal Unix milliseconds/,
    );
    // Nothing is left claimed after a failed claim.
    expect(await suite.admin.get(`${timeGarbage}/0`).string()).toBeNull();
  });

  it('a lease revoked behind its back: fenced at the next keepalive, then resumes', async () => {
    const { held, gen } = await fastGenerator('revoked', 4);
    await gen.nextId();
    await suite.admin.leaseClient.leaseRevoke({ ID: held.leaseId });
    await aborted(held.signal);
    expect(['lease-expired', 'key-lost']).toContain((held.signal.reason as LeaseLostError).kind);
    await until(async () => (await gen.nextId().catch(() => 0n)) > 0n, 5000, 'the generator to resume');
    await gen.close();
  });
});

describe('an etcd that cannot be reached: StoreUnavailableError within timeoutMs, never a hang', () => {
  let silent: Server;
  let silentUrl: string;
  beforeAll(async () => {
    // Accepts connections and never answers: what a hung server or a black-holed route looks like.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => {
    silent.close();
  });

  it('nothing listening', async () => {
    const endpoints = `http://127.0.0.1:${await freePort()}`;
    const t0 = performance.now();
    const error = await failure(claim(layoutWith(8), { endpoints, timeoutMs: 1500 }));
    expect(performance.now() - t0).toBeLessThan(1500 + 500);
    expect(error.cause).toBeInstanceOf(StoreUnavailableError);
    expect((error.cause as StoreUnavailableError).code).toBe('ERR_IDS_STORE_UNAVAILABLE');
    expect((error.cause as Error).message).toMatch(new RegExp(`granting a lease: etcd at ${endpoints}`));
  });

  it('a server that never answers', async () => {
    for (const run of [
      () => claim(layoutWith(8), { endpoints: silentUrl, timeoutMs: 1000 }),
      () => etcdCheckMachineId({ endpoints: silentUrl, timeoutMs: 1000 })(1),
    ]) {
      const t0 = performance.now();
      const error = await failure(run());
      const elapsed = performance.now() - t0;
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(1000 + 500);
      const cause = error instanceof StoreUnavailableError ? error : (error as Error).cause;
      expect(cause).toBeInstanceOf(StoreUnavailableError);
      expect((cause as Error).message).toMatch(/did not answer within 1000 ms|unavailable/);
    }
  });
});
