// Against one real etcd server: the check, claims, the recorded time, release, dense and full
// fields, garbage under the prefix, and an etcd that cannot be reached.
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import {
  checkGeneratorOptions,
  FakeClock,
  IdGenerator,
  MachineIdLostError,
  MachineIdRejectedError,
  resolveMachineId,
  tickStartMs,
} from '@ids/engine';
import { tickOf } from '@ids/engine/internal';
import { freePort } from '@ids/test-services';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeScheduler } from '../../machine-lease/test/fake-scheduler.js';
import {
  etcdCheckMachineId,
  LeaseBitsMismatchError,
  LeaseCorruptClaimError,
  LeaseLostError,
  LeaseSpaceFullError,
  LeaseStoreUnavailableError,
  LeaseTimeAheadError,
} from '../src/index.js';
import {
  aborted,
  adminClient,
  claim,
  etcdForSuite,
  expectFullField,
  failure,
  freshPrefix,
  generatorOn,
  layoutWith,
  twoHundredClaims,
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
  it('claims a free ID, keeps it past the TTL, generates under it, and frees it at once on close', async () => {
    const prefix = freshPrefix('claim');
    const layout = layoutWith(10);
    const held = await claim(layout, {
      endpoints: suite.server.endpoints,
      prefix,
      ...fast,
    });
    expect(held.machineId).toBeGreaterThanOrEqual(0);
    expect(held.machineId).toBeLessThan(1024);
    expect(held.key).toBe(`${prefix}/${held.machineId}`);
    expect(await leaseOf(held.key)).toBe(held.leaseId);
    const gen = generatorOn(layout, held);
    const first = await gen.nextIds(100);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // 1.5 TTLs
    expect(held.signal.aborted).toBe(false);
    expect(await leaseOf(held.key)).toBe(held.leaseId);
    const later = await gen.nextId();
    expect(gen.decompose(later).machine).toBe(held.machineId);
    expect(later).toBeGreaterThan(first.at(-1)!);
    await gen.close();
    expect(await suite.admin.get(held.key).string()).toBeNull();
    const ttl = await suite.admin.leaseClient.leaseTimeToLive({ ID: held.leaseId, keys: false });
    expect(Number(ttl.TTL)).toBe(-1); // revoked, not waiting to expire
    // The time reached stays for the next holder.
    const recorded = Number(await suite.admin.get(`${prefix}/time/${held.machineId}`).string());
    expect(recorded).toBeGreaterThanOrEqual(tickStartMs(layout, gen.decompose(later).time + 1) - 1);
  });

  it('200 concurrent claimers (each with its own client) get 200 distinct IDs of a 256-ID field', async () => {
    const prefix = freshPrefix('many');
    // A 60 s TTL: 200 clients starting at once on a busy 2-core machine took longer than the
    // default 10 s lease can be trusted (8 s) before their keepalives got through (4 busy
    // loops, load 25). Fencing is not what this test is about; the claims are released.
    await twoHundredClaims(
      (layout) =>
        claim(layout, { endpoints: suite.server.endpoints, prefix, timeoutMs: 20_000, ttlSeconds: 60 }),
      async () =>
        (await suite.admin.getAll().prefix(`${prefix}/`).keys()).filter((k) => !k.includes('/time/')).length,
    );
    expect(await suite.admin.getAll().prefix(`${prefix}/`).count()).toBe(0);
  });

  it('a nearly full field takes a listing, not thousands of probes: the last of 1,024 IDs in a few requests', async () => {
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
      // 3 random probes, two pages of listing, one claim.
      expect(tally.txn).toBeLessThanOrEqual(4);
      expect(tally.range).toBe(2);
      await held.release();
      // A client given to us is not closed by release.
      expect(await client.get(`${prefix}/0`).string()).toBe(identity());
    } finally {
      await suite.admin.leaseClient.leaseRevoke({ ID: lease.ID });
      client.close();
    }
  });

  it('a full field: LeaseSpaceFullError saying so', async () => {
    const prefix = freshPrefix('full');
    await expectFullField(
      (layout) => claim(layout, { endpoints: suite.server.endpoints, prefix, ...fast }),
      LeaseSpaceFullError,
    );
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

  it('a claim under the prefix wider than the field: LeaseBitsMismatchError', async () => {
    const prefix = freshPrefix('wider');
    for (const id of [0, 1, 2, 3]) await suite.admin.put(`${prefix}/${id}`).value(identity());
    await suite.admin.put(`${prefix}/5000`).value(identity());
    const error = await failure(
      claim(layoutWith(2), { endpoints: suite.server.endpoints, prefix, probes: 0 }),
    );
    expect(error.cause).toBeInstanceOf(LeaseBitsMismatchError);
    expect((error.cause as Error).message).toMatch(
      /machine ID 5000, which does not fit a 2-bit machine field/,
    );
  });

  it('records the time reached; the next holder of the ID issues nothing at or before it', async () => {
    const prefix = freshPrefix('record');
    const layout = layoutWith(0); // one ID: the next holder gets the same one
    const ahead = new FakeClock(Date.now() + 3_600_000); // the first holder's clock is an hour ahead
    const first = await claim(layout, { endpoints: suite.server.endpoints, prefix, ...fast });
    const gen1 = new IdGenerator(checkGeneratorOptions({ layout, machineId: first, clock: ahead }));
    const last = (await gen1.nextIds(1000)).at(-1)!;
    await gen1.close();
    const lastTick = gen1.decompose(last).time;

    // With a true clock, an hour behind the recorded time: refuses rather than reissue (the
    // claim gives up past maxNotBeforeWaitMs, the TTL plus a minute by default).
    const second = await failure(claim(layout, { endpoints: suite.server.endpoints, prefix, ...fast }));
    expect(second.cause).toBeInstanceOf(LeaseTimeAheadError);

    // A holder whose clock is just behind waits for the recorded tick to pass (on its injected
    // clock), then continues above it.
    const behind = new FakeClock(tickStartMs(layout, lastTick) - 5);
    const scheduler = new FakeScheduler();
    scheduler.wallStartMs = behind.now();
    let noticed: () => void = () => undefined;
    const said = new Promise<void>((resolve) => {
      noticed = resolve;
    });
    const pending = claim(layout, {
      endpoints: suite.server.endpoints,
      prefix,
      ...fast,
      scheduler,
      onError: () => noticed(),
    } as Parameters<typeof claim>[1]);
    await said;
    await scheduler.advance(tickStartMs(layout, lastTick + 1) - behind.now());
    const third = await pending;
    expect(third.machineId).toBe(0);
    expect(third.notBefore).toBe(tickStartMs(layout, lastTick + 1) - 1);
    const gen3 = new IdGenerator(checkGeneratorOptions({ layout, machineId: third, clock: behind }));
    const next = await gen3.nextId();
    expect(gen3.decompose(next).time).toBe(lastTick + 1);
    expect(next).toBeGreaterThan(last);
    expect(tickOf(layout, behind.now())).toBe(lastTick + 1);
    await gen3.close();
  });

  it('an operator deleting the claim key fences the generator, which then resumes under a new claim', async () => {
    const { prefix, held, gen } = await fastGenerator('deleted', 4);
    const before = await gen.nextId();
    await suite.admin.delete().key(held.key);
    await aborted(held.signal);
    expect((held.signal.reason as LeaseLostError).kind).toBe('key-lost');
    const refused = await failure(gen.nextId());
    expect(refused).toBeInstanceOf(MachineIdLostError);
    expect((refused as Error).message).toMatch(/no longer held: etcd: the claim .* was deleted/);
    let after = 0n;
    await until(
      async () => {
        after = await gen.nextId().catch(() => 0n);
        return after > 0n;
      },
      5000,
      'the generator to resume',
    );
    expect(after).toBeGreaterThan(before);
    const now = gen.machine;
    expect(await suite.admin.get(`${prefix}/${now}`).string()).not.toBeNull();
    await gen.close();
    expect(await suite.admin.getAll().prefix(`${prefix}/`).keys()).toEqual(
      expect.not.arrayContaining([`${prefix}/${now}`]),
    );
  });

  it('a thread that never yields (a nextIdSync loop) is fenced at the deadline all the same', async () => {
    const { gen } = await fastGenerator('busy', 10);
    const start = performance.now();
    // No keepalive can be sent or confirmed from here on: the event loop is never free.
    let issued = 0;
    let error: unknown;
    try {
      while (performance.now() - start < 4000) {
        gen.nextIdSync();
        issued++;
      }
    } catch (e) {
      error = e;
    }
    const stoppedAfter = performance.now() - start;
    expect(error).toBeInstanceOf(MachineIdLostError);
    expect((error as Error).message).toMatch(/no keepalive confirmed for \d+ ms/);
    // The lease was granted or last confirmed before the loop began: TTL - margin at most.
    expect(stoppedAfter).toBeLessThan(2000 - 500 + 20);
    expect(issued).toBeGreaterThan(1000);
    await gen.close();
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

describe('an etcd that cannot be reached: LeaseStoreUnavailableError within timeoutMs, never a hang', () => {
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
    expect(error.cause).toBeInstanceOf(LeaseStoreUnavailableError);
    expect((error.cause as LeaseStoreUnavailableError).code).toBe('ERR_IDS_LEASE_STORE_UNAVAILABLE');
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
      const cause = error instanceof LeaseStoreUnavailableError ? error : (error as Error).cause;
      expect(cause).toBeInstanceOf(LeaseStoreUnavailableError);
      expect((cause as Error).message).toMatch(/did not answer within 1000 ms|unavailable/);
    }
  });
});
