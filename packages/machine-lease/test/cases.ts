// What every lease store keeps, written once (as packages/lock/test/cases.ts is for locks): each
// store's tests call leaseContract with what differs between the stores (how to open a fresh
// place, how an operator meddles with its claims, how time passes), and the in-memory store on
// the fake scheduler runs the same cases without a server (contract.test.ts).
import {
  type Clock,
  type IdGenerator,
  InvalidArgumentError,
  type Layout,
  MachineIdLostError,
  MachineIdProviderError,
  resolveMachineId,
  tickStartMs,
} from '@ids/engine';
import { expect, it } from 'vitest';
import type { LeasedClaim } from '../src/claim.js';
import type * as errors from '../src/errors.js';
import type { HolderOptions, LeaseOptions } from '../src/options.js';
import type { LeasedMachineIdProvider } from '../src/provider.js';
import { aborted, failure, generatorOn, layoutWith, sleep, until, WAIT_MS } from './kit.js';

/** What a case may set on a claim beyond the store's connection and place. */
export type ClaimExtra = HolderOptions & LeaseOptions;

/** One fresh place (a prefix, a path, a server of its own) in a store, and an operator on it. */
export interface LeasePlace {
  /** The store's provider for this place, with the store's lease timing under `extra`. */
  provider(extra?: ClaimExtra): LeasedMachineIdProvider;
  /** The IDs with a live claim here now. */
  claimed(): Promise<number[]>;
  /** Claims of `ids` by a holder outside the test, live until the place is dropped. */
  plant(ids: readonly number[]): Promise<void>;
  /** An operator deletes the claim of `id`. */
  drop(id: number): Promise<void>;
  /** The time recorded here for `id` (Unix ms), if any. */
  recorded(id: number): Promise<number | undefined>;
}

/** A store as the contract sees it. */
export interface LeaseSubject {
  /** The `store` of its errors. */
  readonly store: string;
  /** The lease error classes as the store's package exports them (each package its own build). */
  readonly errors: Pick<typeof errors, 'LeaseBitsMismatchError' | 'LeaseLostError' | 'LeaseSpaceFullError'>;
  /**
   * A fresh place named for `name` whose IDs of a `bits`-bit field the tests may claim at once
   * (a store that makes a claim with no known past wait a TTL gets a past recorded for them).
   */
  place(name: string, bits: number): Promise<LeasePlace>;
  /** How many holders claim at once in the concurrency case (each with its own client). */
  readonly concurrent: number;
  /** The generators' clock (the real one on servers). */
  readonly clock?: Clock;
  /** The holders' monotonic time, in ms (performance.now() on servers). */
  now(): number;
  /** Lets `ms` pass for the holders: fake time in memory, real time on a server. */
  pass(ms: number): Promise<void>;
  /** Settles `promise`, moving fake time while it waits (nothing to do on a server). */
  settle<T>(promise: Promise<T>): Promise<T>;
  /** Waits until `fn` is true, failing after a generous while, with `what` in the failure. */
  until(fn: () => Promise<boolean>, what: string): Promise<void>;
  /**
   * One turn of a loop that never yields: the clock moves, no timer runs (fake time moves by a
   * millisecond; on a server, real time moves by itself).
   */
  busy(): void;
}

/** The lease timing of every case: a 2 s TTL, fenced 500 ms before it. */
export const CONTRACT_TTL_MS = 2000;

/** How time passes for a store on a real server: real time, waited for, never measured for speed. */
export const realTime: Pick<LeaseSubject, 'now' | 'pass' | 'settle' | 'until' | 'busy'> = {
  now: () => performance.now(),
  pass: sleep,
  settle: (promise) => promise,
  until: (fn, what) => until(fn, WAIT_MS, what),
  busy: () => undefined,
};

/**
 * The contract on a store's real server: real time, the store's error classes (`errors`, its
 * package's), `concurrent` holders at once, and `place` (called inside each test).
 */
export function leaseContractOnServer(
  store: string,
  errors: LeaseSubject['errors'],
  concurrent: number,
  place: LeaseSubject['place'],
): void {
  leaseContract(() => ({ ...realTime, store, errors, concurrent, place }));
}

/** The identity a holder outside the test leaves in a claim it plants (`extra`: a store's own fields). */
export function foreignIdentity(extra: Record<string, string> = {}): string {
  return JSON.stringify({ ...extra, host: 'elsewhere', pid: 1, started: '2020-01-01T00:00:00.000Z' });
}

/** The machine IDs among claim names (a store's listing may hold other keys beside them), in order. */
export function idsAmong(names: readonly string[]): number[] {
  return names
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
}

/** Runs the provider the way Sonyflake.create does (range check included); time is moved by the caller. */
async function claimAlone(place: LeasePlace, layout: Layout, extra?: ClaimExtra): Promise<LeasedClaim> {
  return (await resolveMachineId(layout, place.provider(extra))) as LeasedClaim;
}

/** claimAlone, with fake time moved until it settles. */
function claimOn(subject: LeaseSubject, place: LeasePlace, layout: Layout, extra?: ClaimExtra) {
  return subject.settle(claimAlone(place, layout, extra));
}

/** `count` claims at once, with fake time moved until all have settled. */
function claimMany(
  subject: LeaseSubject,
  place: LeasePlace,
  count: number,
  layout: Layout,
  extra?: ClaimExtra,
) {
  return subject.settle(Promise.all(Array.from({ length: count }, () => claimAlone(place, layout, extra))));
}

/** A claim on a fresh place named `name` in a `bits`-bit field, and a generator on it. */
async function heldGenerator(s: LeaseSubject, name: string, bits: number) {
  const layout = layoutWith(bits);
  const place = await s.place(name, bits);
  const held = await claimOn(s, place, layout);
  return { layout, place, held, gen: generatorOn(layout, held, { clock: s.clock }) };
}

/** The next ID of `generator`, or undefined when it refuses (fenced, still renewing). */
async function issued(subject: LeaseSubject, generator: IdGenerator): Promise<bigint | undefined> {
  return subject.settle(generator.nextId()).catch(() => undefined);
}

/**
 * The cases every lease store runs, registered in the enclosing describe. `subject` is called
 * inside each test (a suite's server exists only then).
 */
export function leaseContract(subject: () => LeaseSubject): void {
  it('claims a free ID, keeps it past the TTL, issues under it, and on release frees it at once and leaves the time reached', async () => {
    const s = subject();
    const { layout, place, held, gen } = await heldGenerator(s, 'claim', 4);
    expect(held.machineId).toBeGreaterThanOrEqual(0);
    expect(held.machineId).toBeLessThan(16);
    expect(await place.claimed()).toEqual([held.machineId]);
    const first = gen.nextIdSync();
    await s.pass(CONTRACT_TTL_MS * 1.5);
    expect(held.signal.aborted, 'kept alive past the TTL').toBe(false);
    expect(await place.claimed()).toEqual([held.machineId]);
    const later = gen.nextIdSync();
    expect(gen.decompose(later).machine).toBe(held.machineId);
    expect(later).toBeGreaterThan(first);
    await s.settle(gen.close());
    // Freed at once on release, not when the lease would have expired.
    expect(await place.claimed()).toEqual([]);
    expect(held.signal.reason).toMatchObject({ name: 'LeaseLostError', kind: 'released' });
    expect(await place.recorded(held.machineId)).toBeGreaterThanOrEqual(
      tickStartMs(layout, gen.decompose(later).time + 1) - 1,
    );
    // Releasing again is not an error, and records nothing.
    await held.release();
    const far = Date.now() + 3_600_000;
    await held.record(far);
    expect(await place.recorded(held.machineId)).toBeLessThan(far);
  });

  it('concurrent holders (each with its own client) get distinct IDs of a 256-ID field, and none is left after release', async () => {
    const s = subject();
    const place = await s.place('many', 8);
    // Long leases and requests: many clients starting at once on a busy machine take seconds
    // before their keepalives get through. Fencing is not what this case is about.
    const claims = await claimMany(s, place, s.concurrent, layoutWith(8), {
      ttlSeconds: 60,
      timeoutMs: 20_000,
    });
    try {
      const ids = claims.map((c) => c.machineId);
      expect(new Set(ids).size).toBe(s.concurrent);
      expect(Math.max(...ids)).toBeLessThan(256);
      expect(await place.claimed()).toEqual([...ids].sort((a, b) => a - b));
    } finally {
      await s.settle(Promise.all(claims.map((c) => c.release())));
    }
    expect(await place.claimed()).toEqual([]);
  });

  it('a full field: LeaseSpaceFullError saying every ID is held, nothing taken', async () => {
    const s = subject();
    const place = await s.place('full', 2);
    const layout = layoutWith(2);
    const four = await claimMany(s, place, 4, layout);
    try {
      expect(new Set(four.map((c) => c.machineId))).toEqual(new Set([0, 1, 2, 3]));
      const error = await failure(claimOn(s, place, layout));
      expect(error).toBeInstanceOf(MachineIdProviderError);
      expect(error.cause).toBeInstanceOf(s.errors.LeaseSpaceFullError);
      expect(error.cause).toMatchObject({ store: s.store, code: 'ERR_IDS_LEASE_SPACE_FULL' });
      expect((error.cause as Error).message).toMatch(
        /every machine ID is held: all 4 IDs of the 2-bit field/,
      );
      expect(await place.claimed()).toEqual([0, 1, 2, 3]);
    } finally {
      await s.settle(Promise.all(four.map((c) => c.release())));
    }
  });

  it('the last free ID of a nearly full field is found (by a listing once the probes hit taken IDs)', async () => {
    const s = subject();
    const place = await s.place('dense', 6);
    const free = 41;
    await place.plant([...Array(64).keys()].filter((id) => id !== free));
    const held = await claimOn(s, place, layoutWith(6));
    expect(held.machineId).toBe(free);
    await s.settle(held.release());
  });

  it('a claim wider than the field: LeaseBitsMismatchError naming the ID', async () => {
    const s = subject();
    const place = await s.place('wider', 2);
    await place.plant([0, 1, 2, 3, 5000]);
    const error = await failure(claimOn(s, place, layoutWith(2), { probes: 0 }));
    expect(error.cause).toBeInstanceOf(s.errors.LeaseBitsMismatchError);
    expect((error.cause as Error).message).toMatch(
      /machine ID 5000, which does not fit a 2-bit machine field/,
    );
  });

  it('machineId: that ID held; held already: LeaseSpaceFullError; outside the field: LeaseBitsMismatchError; record(NaN) refused', async () => {
    const s = subject();
    const place = await s.place('chosen', 2);
    const layout = layoutWith(2);
    const held = await claimOn(s, place, layout, { machineId: 2 });
    try {
      expect(held.machineId).toBe(2);
      const taken = await failure(claimOn(s, place, layout, { machineId: 2 }));
      expect(taken.cause).toBeInstanceOf(s.errors.LeaseSpaceFullError);
      expect((taken.cause as errors.LeaseSpaceFullError).store).toBe(s.store);
      expect((taken.cause as Error).message).toMatch(/machine ID 2 is held by another process/);
      const wide = await failure(claimOn(s, place, layout, { machineId: 4 }));
      expect(wide.cause).toBeInstanceOf(s.errors.LeaseBitsMismatchError);
      expect((wide.cause as Error).message).toMatch(
        /machineId 4 does not fit the generator's 2-bit machine field/,
      );
      await expect(held.record(Number.NaN)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(held.record(Number.NaN)).rejects.toThrow(
        /record: expected Unix milliseconds, received NaN/,
      );
      expect(await place.claimed()).toEqual([2]);
    } finally {
      await s.settle(held.release());
    }
  });

  it('records the time reached; the next holder of the ID starts past it and issues above the last ID', async () => {
    const s = subject();
    const place = await s.place('record', 0);
    const layout = layoutWith(0);
    const first = await claimOn(s, place, layout);
    const gen = generatorOn(layout, first, { clock: s.clock });
    let last = 0n;
    for (let i = 0; i < 300; i++) last = gen.nextIdSync();
    await s.settle(gen.close());
    const second = await claimOn(s, place, layout);
    expect(second.machineId).toBe(0);
    expect(second.notBefore).toBeGreaterThanOrEqual(tickStartMs(layout, gen.decompose(last).time + 1) - 1);
    const gen2 = generatorOn(layout, second, { clock: s.clock });
    expect(await s.settle(gen2.nextId())).toBeGreaterThan(last);
    await s.settle(gen2.close());
  });

  it('an operator deleting the claim fences the generator, which resumes on the same ID (tried first)', async () => {
    const s = subject();
    const { place, held, gen } = await heldGenerator(s, 'deleted', 4);
    const before = gen.nextIdSync();
    await place.drop(held.machineId);
    await s.settle(aborted(held.signal));
    expect(held.signal.reason).toBeInstanceOf(s.errors.LeaseLostError);
    expect((held.signal.reason as errors.LeaseLostError).kind).toBe('key-lost');
    let after: bigint | undefined;
    await s.until(async () => {
      after = await issued(s, gen);
      return after !== undefined;
    }, 'the generator to resume');
    expect(after).toBeGreaterThan(before);
    // Of 16 free IDs, the one held before is tried first.
    expect(gen.machine).toBe(held.machineId);
    expect(await place.claimed()).toEqual([held.machineId]);
    await s.settle(gen.close());
    expect(await place.claimed()).toEqual([]);
  });

  it('a loop that never yields (nextIdSync) is fenced at the trust deadline all the same', async () => {
    const s = subject();
    const { held, gen } = await heldGenerator(s, 'busy', 4);
    // No keepalive can be sent or confirmed from here on: the event loop is never free. The
    // deadline is at most `trusted` from `start`.
    const trusted = held.trustedForMs();
    const start = s.now();
    let lastAsked = start;
    let issuedCount = 0;
    let error: unknown;
    try {
      // The bound only ends a run that would never fence.
      while (s.now() - start < CONTRACT_TTL_MS * 3) {
        const asked = s.now();
        gen.nextIdSync();
        lastAsked = asked;
        issuedCount++;
        s.busy();
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MachineIdLostError);
    expect((error as Error).message).toMatch(/no keepalive confirmed for \d+ ms/);
    // Every ID was asked for before the deadline: the check that let it through came after.
    expect(lastAsked - start).toBeLessThan(trusted);
    expect(issuedCount).toBeGreaterThan(0);
    await s.settle(gen.close());
  });
}
