// The lease contract (cases.ts) on the in-memory store and the fake scheduler: the same cases
// the stores run on real servers, with no server and no real time. Then what only a store under
// the test's full control can show exactly: the unknown-past quarantine, the renewal back-off,
// and a release the store cannot answer.
import { describe, expect, it } from 'vitest';
import type { LeasedClaim } from '../src/claim.js';
import * as errors from '../src/errors.js';
import { RecordedTimeWait } from '../src/not-before.js';
import { checkLeaseOptions } from '../src/options.js';
import { leasedMachineId } from '../src/provider.js';
import { type ClaimExtra, type LeasePlace, type LeaseSubject, leaseContract } from './cases.js';
import { FakeScheduler } from './fake-scheduler.js';
import { aborted, FAST_LEASE, failure } from './kit.js';
import { MemoryLeaseServer } from './memory-store.js';
import { notBeforeCases } from './not-before.js';

/** Fake time a wait may take before it counts as a hang. */
const FAKE_WAIT_MS = 120_000;

/** A place of its own: one MemoryLeaseServer, and a provider whose every claim has its own client. */
function memoryPlace(scheduler: FakeScheduler, server = new MemoryLeaseServer(scheduler)) {
  const place = {
    server,
    /** The client of the newest claim. */
    client: undefined as ReturnType<MemoryLeaseServer['client']> | undefined,
    provider(extra: ClaimExtra = {}) {
      const lease = checkLeaseOptions({ ...FAST_LEASE, ...extra });
      return leasedMachineId({
        store: 'memory',
        options: { scheduler, onError: () => undefined, ...extra } as object,
        lease,
        open: () => {
          place.client = server.client(lease.timeoutMs);
          return place.client;
        },
      });
    },
    claimed: async () => server.claimed(),
    plant: async (ids: readonly number[]) => server.plant(ids),
    drop: async (id: number) => server.drop(id),
    recorded: async (id: number) => server.recorded(id),
  };
  return place satisfies LeasePlace;
}

/** Moves fake time in 10 ms steps until `promise` settles; fails after FAKE_WAIT_MS. */
async function settleOn<T>(scheduler: FakeScheduler, promise: Promise<T>): Promise<T> {
  let done = false;
  const out = promise.finally(() => {
    done = true;
  });
  out.catch(() => undefined);
  await scheduler.advance(0);
  for (let t = 0; !done && t < FAKE_WAIT_MS; t += 10) await scheduler.advance(10);
  if (!done) throw new Error(`not settled within ${FAKE_WAIT_MS} ms of fake time`);
  return out;
}

function memorySubject(): LeaseSubject {
  const scheduler = new FakeScheduler(Date.now());
  scheduler.wallStartMs = scheduler.now();
  return {
    store: 'memory',
    errors,
    concurrent: 200,
    clock: scheduler.clock,
    place: async () => memoryPlace(scheduler),
    now: () => scheduler.now(),
    pass: (ms) => scheduler.advance(ms),
    settle: (promise) => settleOn(scheduler, promise),
    async until(fn, what) {
      for (let t = 0; t < FAKE_WAIT_MS; t += 50) {
        if (await fn()) return;
        await scheduler.advance(50);
      }
      throw new Error(`not within ${FAKE_WAIT_MS} ms of fake time: ${what}`);
    },
    busy: () => scheduler.clock.advance(1),
  };
}

describe('the lease contract on the in-memory store', () => {
  leaseContract(memorySubject);
});

describe('a recorded time ahead of the clock, on the in-memory store', () => {
  // The not-before cases every store runs (not-before.ts): each claim brings its own scheduler,
  // so a place's server is made at its first claim, with the time set before it.
  const servers = new Map<string, MemoryLeaseServer>();
  const times = new Map<string, number>();
  let places = 0;
  notBeforeCases({
    prefix: (name) => `${name}-${places++}`,
    claim: (options) => {
      const { prefix, scheduler, ...extra } = options as { prefix: string; scheduler: FakeScheduler };
      let server = servers.get(prefix);
      if (!server) {
        server = new MemoryLeaseServer(scheduler);
        const time = times.get(prefix);
        if (time !== undefined) server.seedTime(0, time);
        servers.set(prefix, server);
      }
      return memoryPlace(scheduler, server).provider(extra)({ bits: 0 });
    },
    setTime: async (prefix, ms) => {
      times.set(prefix, ms);
    },
    claimed: async (prefix) => servers.get(prefix)?.claimed().includes(0) ?? false,
    notice: RecordedTimeWait,
    timeAhead: errors.LeaseTimeAheadError,
    name: 'memory',
  });
});

describe('the holder on the in-memory store, exactly', () => {
  it('a claim with no known past (a store that forgets) is held at once, handed out one TTL later, from a record of now + TTL', async () => {
    const scheduler = new FakeScheduler(Date.now());
    scheduler.wallStartMs = scheduler.now();
    const place = memoryPlace(scheduler);
    place.server.forgetful = true;
    const start = scheduler.wallNow();
    let claim: LeasedClaim | undefined;
    const pending = place
      .provider()({ bits: 0 })
      .then((c) => {
        claim = c;
      });
    await scheduler.advance(0);
    expect(place.server.claimed(), 'held while waiting').toEqual([0]);
    expect(place.server.recorded(0)).toBe(start + 2000);
    await scheduler.advance(1999);
    expect(claim, 'not handed out before the TTL').toBeUndefined();
    await scheduler.advance(1);
    await pending;
    expect(claim?.machineId).toBe(0);
    expect(claim?.notBefore).toBe(start + 2000);
    await claim?.release();
  });

  it('renewal with the store unreachable backs off 100, 200, 400 ms ... up to 2 s, then claims the same ID under a new lease', async () => {
    const scheduler = new FakeScheduler(Date.now());
    scheduler.wallStartMs = scheduler.now();
    const place = memoryPlace(scheduler);
    const held = await settleOn(scheduler, place.provider()({ bits: 4 }));
    const client = place.client!;
    client.down = true;
    await settleOn(scheduler, aborted(held.signal));
    const from = client.sent.length;
    const renewal = held.renew();
    await scheduler.advance(18_000);
    // Each attempt is a keepalive (is the old lease still ours?) that times out after 1 s,
    // then a pause that doubles.
    const attempts = client.sentAt.slice(from);
    expect(client.sent.slice(from).every((op) => op === 'keepalive')).toBe(true);
    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    expect(gaps).toEqual([1100, 1200, 1400, 1800, 2600, 3000, 3000, 3000]);
    client.down = false;
    const renewed = await settleOn(scheduler, renewal);
    // The old lease expired in the store meanwhile: a new one, and the ID held before.
    expect(renewed.leaseId).not.toBe(held.leaseId);
    expect(renewed.machineId).toBe(held.machineId);
    await settleOn(scheduler, renewed.release());
  });

  it('a release the store cannot answer: StoreUnavailableError saying the ID is freed within the TTL, and it is', async () => {
    const scheduler = new FakeScheduler(Date.now());
    scheduler.wallStartMs = scheduler.now();
    const place = memoryPlace(scheduler);
    const held = await settleOn(scheduler, place.provider()({ bits: 4 }));
    place.client!.down = true;
    const error = await failure(settleOn(scheduler, held.release()));
    expect(error).toBeInstanceOf(errors.StoreUnavailableError);
    expect(error.message).toMatch(
      new RegExp(`releasing machine ID ${held.machineId}: the lease could not be revoked .*within 2 s`),
    );
    expect(held.signal.reason).toMatchObject({ kind: 'released' });
    await scheduler.advance(2000);
    expect(place.server.claimed()).toEqual([]);
  });
});
