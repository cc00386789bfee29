// Several claims of one process on one lease (`shareLease`, issue 36), on the in-memory store
// and the fake scheduler. As in holder.test.ts, every ID issued is checked against the store's
// truth at the instant it is issued: its machine ID is held by a lease of the issuing process,
// with at least the fencing margin left, and no two generators of any process share a machine
// ID (the duplicates count would show it).
import { describe, expect, it } from 'vitest';
import { testLayout } from './fixtures/lease-process.mjs';
import { MemoryWorld, SimulatedProcess, type SimulatedSlot, STEP_MS, TRUST_MS } from './memory-trust.js';

/** Four machine IDs: one process of four claims fills the field. */
const layout = testLayout(2);

class World extends MemoryWorld<SimulatedProcess> {
  /** One process holding `count` machine IDs through one provider with `shareLease`. */
  process(count: number): SimulatedProcess {
    return this.add(new SimulatedProcess(this, layout, count, { shareLease: true }));
  }
}

function machinesOf(process: SimulatedProcess): number[] {
  return process.slots.map((slot) => slot.generator?.machine ?? -1).sort();
}

/** A new world with one process `a` of `count` claims on one lease, run for `ms` (by 1 s all are held and issuing). */
async function started(count: number, ms = 1000): Promise<{ world: World; a: SimulatedProcess }> {
  const world = new World();
  const a = world.process(count);
  await world.run(ms);
  return { world, a };
}

describe('claims sharing one lease', () => {
  it('four claims hold four IDs under one lease, with one keepalive per interval for all', async () => {
    const { world, a } = await started(4);
    expect(machinesOf(a)).toEqual([0, 1, 2, 3]);
    expect(a.count('grant'), 'leases granted').toBe(1);
    expect(world.server.liveLeases()).toHaveLength(1);
    const before = a.count('keepalive');
    await world.run(TRUST_MS * 4);
    // The keeper beats every TRUST_MS / 3: 12 beats in 4 windows, whatever the number of claims.
    const beats = a.count('keepalive') - before;
    expect(beats).toBeGreaterThanOrEqual(11);
    expect(beats).toBeLessThanOrEqual(13);
    expect(world.server.liveLeases()).toHaveLength(1);
    for (const slot of a.slots) expect(slot.claim?.leaseId).toBe(world.server.liveLeases()[0]);
    expect(world.violations()).toEqual([]);
    expect(world.duplicates()).toBe(0);
  });

  it('a lost lease fences every claim before a successor can take any of their IDs', async () => {
    const { world, a } = await started(4);
    expect(a.issuedBetween(world.start + 500, world.scheduler.now())).toBeGreaterThan(0);
    const cut = world.scheduler.now();
    a.client.down = true;
    // A successor process waits for the field: it gets the IDs once A's lease expired on the server.
    const b = world.process(4);
    await world.run(12_000);
    expect(machinesOf(b)).toEqual([0, 1, 2, 3]);
    const firstB = Math.min(...b.slots.map((slot) => slot.ids[0]?.at ?? Number.POSITIVE_INFINITY));
    // Every claim of A stopped within the trust window of the last keepalive sent before the cut.
    expect(a.issuedBetween(cut + TRUST_MS, world.scheduler.now()), 'A issued past its trust window').toBe(0);
    expect(a.issuedBetween(firstB - 1, world.scheduler.now()), 'A issued once B did').toBe(0);
    for (const slot of a.slots) expect(slot.claim?.signal.aborted).toBe(true);
    // A's link back: it finds the field full and issues nothing beside B.
    a.client.down = false;
    await world.run(6000);
    expect(a.issuedBetween(firstB - 1, world.scheduler.now())).toBe(0);
    expect(world.violations()).toEqual([]);
    expect(world.duplicates()).toBe(0);
  });

  it('a keepalive refused aborts every claim on the lease at once, with no ID asked for', async () => {
    const { world, a } = await started(4);
    // The store forgets the lease; the next keepalive is refused. Only timers run: no generator
    // is asked for an ID, so no verify() stops them, only the loss reaching every claim.
    world.server.forget();
    await world.scheduler.advance(TRUST_MS / 3 + STEP_MS);
    for (const slot of a.slots) {
      expect(slot.claim!.signal.aborted).toBe(true);
      expect(slot.claim!.signal.reason).toMatchObject({ kind: 'lease-expired' });
    }
  });

  it('releasing one claim deletes its key only; the last release revokes the lease and closes the store', async () => {
    // The whole field: the released ID is the only one another process can take.
    const { world, a } = await started(4);
    const lease = a.slots[0]!.claim!.leaseId;
    const released = a.slots[0]!;
    const machine = released.generator!.machine;
    // The process is being shut down, one generator at a time.
    await a.release(released);
    expect(world.server.owner(machine), 'the released ID is free').toBeUndefined();
    expect(world.server.liveLeases()).toEqual([lease]);
    const t = world.scheduler.now();
    await world.run(TRUST_MS * 3);
    expect(a.issuedBetween(t, world.scheduler.now()), 'the others go on issuing').toBeGreaterThan(0);
    for (const slot of a.slots.slice(1)) {
      expect(slot.claim!.signal.aborted).toBe(false);
      expect(world.server.owner(slot.generator!.machine)).toBe(lease);
    }
    expect(a.count('grant')).toBe(1);
    expect(a.count('revoke')).toBe(0);
    // Another process takes the released ID beside them.
    const b = world.process(1);
    await world.run(1000);
    expect(b.slots[0]!.generator?.machine).toBe(machine);
    for (const slot of a.slots.slice(1)) await a.release(slot);
    expect(a.count('revoke')).toBe(1);
    expect(a.client.closed).toBe(true);
    expect(world.server.liveLeases()).toEqual([b.slots[0]!.claim!.leaseId]);
    expect(world.violations()).toEqual([]);
    expect(world.duplicates()).toBe(0);
  });

  it('one claim whose key is lost is fenced alone, and claims again under the same lease', async () => {
    const { world, a } = await started(2);
    const [first, second] = a.slots as [SimulatedSlot, SimulatedSlot];
    const lease = first.claim!.leaseId;
    const machine = first.generator!.machine;
    world.server.deleteClaim(machine);
    // Deleted without telling the watch (deleteClaim): the next record finds the key gone.
    await first.claim!.record(world.scheduler.wallNow());
    await world.run(100);
    expect(first.claim!.signal.aborted).toBe(true);
    expect(second.claim!.signal.aborted, 'the other claim was not disturbed').toBe(false);
    await first.claim!.renew();
    await world.run(500);
    expect(world.server.owner(machine)).toBe(lease);
    expect(a.count('grant')).toBe(1);
    expect(world.violations()).toEqual([]);
    expect(world.duplicates()).toBe(0);
  });
});

describe('claims sharing a lease recovered from a slow store', () => {
  it('are not handed out again while every confirmation comes too late to trust', async () => {
    const { world, a } = await started(4, 500);
    // Keepalive and claim check each answer 1,300 ms late: confirmed 2,600 ms after sending,
    // past the 2,400 ms window. No claim may issue from the first fence on.
    a.client.answerDelayMs = 1300;
    await world.run(20_000);
    const fencedAt = Math.min(...a.slots.map((slot) => slot.abortedAt[0] ?? Number.POSITIVE_INFINITY));
    expect(fencedAt, 'the slow keepalives fenced the lease').toBeLessThan(world.start + 500 + 2 * TRUST_MS);
    for (const slot of a.slots) expect(slot.abortedAt[0], 'every claim fenced at once').toBe(fencedAt);
    expect(a.issuedBetween(fencedAt, world.scheduler.now())).toBe(0);
    expect(a.count('holds'), 'recoveries tried to confirm').toBeGreaterThan(0);
    a.client.answerDelayMs = 0;
    await world.run(4000);
    expect(machinesOf(a)).toEqual([0, 1, 2, 3]);
    expect(a.issuedBetween(world.scheduler.now() - 1000, world.scheduler.now())).toBeGreaterThan(0);
    expect(world.violations()).toEqual([]);
    expect(world.duplicates()).toBe(0);
  });

  // The sequence of holder.test.ts (issue 33) with four claims on one lease: slow answers, a
  // normal link, the store unreachable past the TTL, then a successor taking the whole field.
  it.each([900, 1199, 1200, 1201, 1300, 1450])(
    'answers %i ms late, then the store down, then a successor: none of the claims issued past the lease',
    async (delay) => {
      const { world, a } = await started(4);
      expect(a.issuedBetween(world.start, world.scheduler.now())).toBeGreaterThan(0);

      a.client.answerDelayMs = delay;
      await world.run(12_000);
      a.client.answerDelayMs = 0;
      await world.run(4000);
      const beforeDown = world.scheduler.now();
      expect(machinesOf(a), 'A holds the whole field again').toEqual([0, 1, 2, 3]);
      for (const slot of a.slots) {
        expect(
          slot.ids.filter((x) => x.at > beforeDown - 1000).length,
          'each claim issues once the store answers',
        ).toBeGreaterThan(0);
      }
      expect(world.server.liveLeases(), 'one lease for the four claims').toHaveLength(1);

      a.client.down = true;
      await world.run(12_000);
      const dark = a.issuedBetween(beforeDown + TRUST_MS, world.scheduler.now());

      const b = world.process(4);
      await world.run(8000);
      expect(machinesOf(b)).toEqual([0, 1, 2, 3]);
      const firstB = Math.min(...b.slots.map((slot) => slot.ids[0]?.at ?? Number.POSITIVE_INFINITY));

      expect(dark, 'IDs A issued with no keepalive confirmed for the trust window').toBe(0);
      expect(a.issuedBetween(firstB - 1, world.scheduler.now()), 'IDs A issued once B issued').toBe(0);
      expect(world.violations()).toEqual([]);
      expect(world.duplicates()).toBe(0);
    },
  );
});
