// The holder through the public provider, on the in-memory store and the fake scheduler: no
// server and no real time, so every interleaving of an answer around a deadline is reached on
// purpose. Each test issues IDs with real generators and checks them against the store's own
// truth: an ID is only ever issued while the store holds its machine ID for the issuer's lease
// with at least the fencing margin left (issue 33: a claim that recovered slowly went on
// issuing after its lease expired, and beside the holder that took the ID next).
import { describe, expect, it } from 'vitest';
import { testLayout } from './fixtures/lease-process.mjs';
import type { MemoryLeaseClient } from './memory-store.js';
import { MemoryWorld, SimulatedProcess, TIMEOUT_MS, TRUST_MS } from './memory-trust.js';

const layout = testLayout(0);

class World extends MemoryWorld<SimulatedProcess> {
  /** One holder process, in miniature: its own client, provider and generator (one claim). */
  issuer(client?: MemoryLeaseClient): SimulatedProcess {
    return this.add(new SimulatedProcess(this, layout, 1, { client }));
  }
}

/** The one generator of a holder process: its claim and what it issued. */
const only = (issuer: SimulatedProcess) => issuer.slots[0]!;

describe('a claim recovered from a slow store', () => {
  // The recovery confirms the lease with a keepalive and a check of the claim, two answers: with
  // each answer `delay` ms late, the confirmation lands 2 x delay after the keepalive was sent,
  // against a trust window of TRUST_MS from then. 1200 lands on the deadline itself.
  it.each([900, 1195, 1199, 1200, 1201, 1205, 1300, 1450])(
    'answers %i ms late, then the store down, then a successor: never issued past the lease',
    async (delay) => {
      const world = new World();
      const a = world.issuer();
      await world.run(1000);
      expect(only(a).ids.length, 'A issues before the fault').toBeGreaterThan(0);

      // 1. Slow answers: A fences, then tries to recover its lease through the same slow link.
      a.client.answerDelayMs = delay;
      await world.run(12_000);
      // 2. A normal link again for a while: A holds and issues (recovered, or claimed anew).
      a.client.answerDelayMs = 0;
      await world.run(3000);
      const beforeDown = world.scheduler.now();
      expect(
        a.issuedBetween(beforeDown - 1000, beforeDown),
        'A issues once the store answers',
      ).toBeGreaterThan(0);

      // 3. The store unreachable for 12 s: A's lease runs out on the server.
      a.client.down = true;
      await world.run(12_000);
      const dark = a.issuedBetween(beforeDown + TRUST_MS, world.scheduler.now());

      // 4. A still cut off; B claims the only ID and issues.
      const b = world.issuer();
      await world.run(8000);
      expect(only(b).ids.length, 'B took the ID A lost').toBeGreaterThan(0);
      const firstB = only(b).ids[0]!.at;

      expect(dark, 'IDs A issued with no keepalive confirmed for the trust window').toBe(0);
      expect(a.issuedBetween(firstB - 1, world.scheduler.now()), 'IDs A issued once B issued').toBe(0);
      expect(world.violations()).toEqual([]);
      expect(world.duplicates()).toBe(0);
    },
  );
});

describe('keepalive answers around the trust deadline', () => {
  // A steady holder whose keepalive answers take `delay` ms: the answer to the keepalive that
  // keeps it trusted comes before, at or after the deadline it would extend.
  it.each([-5, -1, 0, 1, 5])('the answer lands %i ms from the deadline', async (offset) => {
    const world = new World();
    const a = world.issuer();
    await world.run(500);
    // Keepalives go out every (TRUST_MS / 3) ms; the one in flight when the previous confirmed
    // time's window ends decides. With every answer `delay` late and one in flight at a time,
    // a keepalive sent at s is confirmed at s + delay, and the next goes out at the first beat
    // after that: the window ends TRUST_MS after the last confirmed send.
    const interval = TRUST_MS / 3;
    const delay = 2 * interval + offset;
    a.client.answerDelayMs = delay;
    await world.run(10_000);
    a.client.answerDelayMs = 0;
    await world.run(3000);
    a.client.down = true;
    await world.run(6000);
    const b = world.issuer();
    await world.run(6000);
    expect(only(b).ids.length).toBeGreaterThan(0);
    expect(world.violations()).toEqual([]);
    expect(world.duplicates()).toBe(0);
  });
});

describe('the claim a holder hands out', () => {
  it('is refused by its own verify() once the lease is past its deadline, with no timer run', async () => {
    const world = new World();
    const a = world.issuer();
    await world.run(500);
    const generator = only(a).generator!;
    a.client.down = true;
    // Move the clock past the deadline without running any timer: a thread too busy to run them.
    world.scheduler.clock.advance(TRUST_MS + 100);
    expect(() => generator.nextIdSync()).toThrow(/no longer held/);
  });

  it('after a recovery that came too late, is not handed out until a lease is confirmed in time', async () => {
    const world = new World();
    const a = world.issuer();
    await world.run(500);
    a.client.answerDelayMs = 1300;
    await world.run(20_000);
    // Every recovery here confirms 2,600 ms after sending, past the 2,400 ms window: nothing issued
    // from the first fence on.
    const fencedAt = only(a).refusedAt[0]!;
    expect(fencedAt).toBeDefined();
    expect(a.issuedBetween(fencedAt, world.scheduler.now())).toBe(0);
    expect(a.client.sent.filter((op) => op === 'grant').length, 'fresh leases tried').toBeGreaterThan(1);
    a.client.answerDelayMs = 0;
    await world.run(3000);
    expect(a.issuedBetween(world.scheduler.now() - 1000, world.scheduler.now())).toBeGreaterThan(0);
    expect(world.violations()).toEqual([]);
  });

  it('whose lease lapsed while it was being made (a slow grant, nobody refusing) is confirmed, not failed', async () => {
    const world = new World();
    // The grant's answer comes 1,900 ms late and the create's 600 ms: the claim is made 2,500 ms
    // after the grant was sent, past the 2,400 ms window. Everything else answers in 200 ms.
    const client = world.server.client(TIMEOUT_MS);
    client.delays.set('grant', 1900);
    client.delays.set('tryCreate', 600);
    client.answerDelayMs = 200;
    const a = world.issuer(client);
    await world.run(3500);
    expect(only(a).refusals).toEqual([]);
    expect(only(a).generator, 'claimed without a second grant').toBeDefined();
    expect(client.sent.filter((op) => op === 'grant')).toHaveLength(1);
    expect(client.sent).toContain('holds');
    expect(only(a).ids.length).toBeGreaterThan(0);
    expect(world.violations()).toEqual([]);
  });
});
