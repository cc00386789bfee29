// The fencing rule of the store-agnostic keeper, on an injected clock: no real time passes and
// no store is involved; the keepalive is a function the test answers by hand, and a lost lease
// is a LeaseLostError naming the store.
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../src/errors.js';
import { type KeeperTiming, LeaseKeeper } from '../src/internal.js';
import { FakeScheduler } from './fake-scheduler.js';

const timing: KeeperTiming = { ttlMs: 2000, marginMs: 500, intervalMs: 400, timeoutMs: 3000 };

interface Call {
  sentAt: number;
  timeoutMs: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function setupFor(store: string, t: KeeperTiming = timing) {
  const scheduler = new FakeScheduler();
  const calls: Call[] = [];
  const lost: LeaseLostError[] = [];
  const grantedAt = scheduler.now();
  const keeper = new LeaseKeeper(
    t,
    scheduler,
    (timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ sentAt: scheduler.now(), timeoutMs, resolve, reject });
      }),
    (reason) => lost.push(reason),
    grantedAt,
    store,
  );
  return { scheduler, calls, lost, keeper, grantedAt };
}

function setup(t: KeeperTiming = timing) {
  return setupFor('etcd', t);
}

describe('LeaseKeeper: when a lease stops being trusted', () => {
  it('keeps the lease while keepalives are confirmed, one every interval', async () => {
    const { scheduler, calls, lost, keeper } = setup();
    keeper.start();
    for (let i = 0; i < 20; i++) {
      await scheduler.advance(400);
      calls.at(-1)?.resolve();
    }
    expect(calls).toHaveLength(20);
    expect(lost).toEqual([]);
    expect(keeper.check()).toBe(true);
  });

  it('fences exactly at last confirmed send + TTL - margin when keepalives hang', async () => {
    const { scheduler, calls, lost, keeper, grantedAt } = setup();
    keeper.start();
    const deadline = grantedAt + 2000 - 500;
    expect(keeper.deadline).toBe(deadline);
    await scheduler.advance(1499);
    expect(calls.length).toBeGreaterThan(0); // sent, never answered
    expect(lost).toEqual([]);
    expect(keeper.check()).toBe(true);
    await scheduler.advance(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseLostError);
    expect(lost[0]!.store).toBe('etcd');
    expect(lost[0]!.kind).toBe('deadline');
    expect(lost[0]!.message).toMatch(/no keepalive confirmed for 1500 ms.*TTL 2000 ms.*margin \(500 ms\)/);
    expect(scheduler.now()).toBe(deadline);
  });

  it('counts a confirmation from when the keepalive was sent, not when the reply came', async () => {
    const { scheduler, calls, lost, keeper } = setup();
    keeper.start();
    await scheduler.advance(400);
    const first = calls[0]!;
    expect(first.sentAt).toBe(scheduler.now());
    // The reply takes 900 ms; the server renewed the lease no earlier than the send.
    await scheduler.advance(900);
    first.resolve();
    await scheduler.advance(0);
    expect(keeper.deadline).toBe(first.sentAt + 2000 - 500);
    await scheduler.advance(first.sentAt + 1500 - scheduler.now() - 1);
    expect(lost).toEqual([]);
    await scheduler.advance(1);
    expect(lost.map((l) => l.kind)).toEqual(['deadline']);
  });

  it('fences at once when a keepalive fails, not a TTL later, keeping the cause', async () => {
    const { scheduler, calls, lost, keeper } = setup();
    keeper.start();
    await scheduler.advance(400);
    calls[0]!.resolve();
    await scheduler.advance(400);
    const unavailable = new Error('14 UNAVAILABLE: connection refused');
    const failedAt = scheduler.now();
    calls[1]!.reject(unavailable);
    await scheduler.advance(0);
    expect(scheduler.now()).toBe(failedAt);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.kind).toBe('keepalive-failed');
    expect(lost[0]!.cause).toBe(unavailable);
    expect(keeper.check()).toBe(false);
  });

  it('passes on what the store said when the lease is gone', async () => {
    const { scheduler, calls, lost, keeper } = setup();
    keeper.start();
    await scheduler.advance(400);
    const gone = new LeaseLostError('etcd', 'lease-expired', 'etcd says lease 1 no longer exists');
    calls[0]!.reject(gone);
    await scheduler.advance(0);
    expect(lost).toEqual([gone]);
  });

  it('check() fences synchronously when the deadline passed and no timer could run', () => {
    const { scheduler, lost, keeper, grantedAt } = setup();
    keeper.start();
    // The thread was busy: the clock moved, no timer fired.
    scheduler.clock.set(grantedAt + 1499);
    expect(keeper.check()).toBe(true);
    scheduler.clock.set(grantedAt + 1500);
    expect(keeper.check()).toBe(false);
    expect(lost.map((l) => l.kind)).toEqual(['deadline']);
  });

  it('never unfences: a confirmation arriving after the fence changes nothing', async () => {
    const { scheduler, calls, lost, keeper } = setup();
    keeper.start();
    await scheduler.advance(400);
    await scheduler.advance(1100);
    expect(lost).toHaveLength(1);
    calls[0]!.resolve();
    await scheduler.advance(0);
    expect(keeper.check()).toBe(false);
    expect(keeper.lost?.kind).toBe('deadline');
    await scheduler.advance(10_000);
    expect(lost).toHaveLength(1);
    expect(scheduler.pending).toBe(0);
  });

  it('bounds each keepalive by the time left before the deadline, and sends one at a time', async () => {
    const { scheduler, calls, keeper } = setup({ ...timing, timeoutMs: 1000 });
    keeper.start();
    await scheduler.advance(400);
    expect(calls[0]!.timeoutMs).toBe(1000); // min(timeoutMs, 1100 left)
    await scheduler.advance(800); // two more beats while the first is pending
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await scheduler.advance(400);
    expect(calls).toHaveLength(2);
    const left = keeper.deadline - scheduler.now();
    expect(calls[1]!.timeoutMs).toBe(Math.min(1000, left));
  });

  it('replies out of order keep the newest send time', async () => {
    const { scheduler, calls, keeper } = setup({ ...timing, timeoutMs: 5000 });
    keeper.start();
    await scheduler.advance(400);
    calls[0]!.resolve();
    await scheduler.advance(400);
    const second = calls[1]!;
    second.resolve();
    await scheduler.advance(0);
    expect(keeper.lastOk).toBe(second.sentAt);
  });

  it('stop() ends keepalives and the watchdog without fencing', async () => {
    const { scheduler, calls, lost, keeper } = setup();
    keeper.start();
    await scheduler.advance(400);
    keeper.stop();
    await scheduler.advance(10_000);
    expect(calls).toHaveLength(1);
    expect(lost).toEqual([]);
    expect(scheduler.pending).toBe(0);
  });

  it('arms one timer until the first keepalive, the deadline watchdog from then on', async () => {
    // Most locks are released before their first keepalive: one timer armed and cleared, not two.
    const { scheduler, calls, lost, keeper, grantedAt } = setup();
    keeper.start();
    expect(scheduler.pendingDurations).toEqual([400]);
    await scheduler.advance(400);
    expect(calls).toHaveLength(1);
    // The next beat, and the watchdog at the deadline of the grant (the keepalive is unanswered).
    expect(scheduler.pendingDurations).toEqual([400, grantedAt + 1500 - scheduler.now()]);
    await scheduler.advance(1099);
    expect(lost).toEqual([]);
    await scheduler.advance(1);
    expect(lost.map((l) => l.kind)).toEqual(['deadline']);
  });

  it('arms the watchdog at start when the deadline comes before the first keepalive', async () => {
    const { scheduler, lost, keeper } = setup();
    // Started late: the grant was sent 1,300 ms ago, its deadline 200 ms away, before the beat.
    await scheduler.advance(1300);
    keeper.start();
    expect(scheduler.pendingDurations).toEqual([200, 400]);
    await scheduler.advance(200);
    expect(lost.map((l) => l.kind)).toEqual(['deadline']);
  });
});

/** The same keeper on a store named `redis`, with `advance` and `clock` at hand. */
function storeSetup() {
  const { scheduler, calls, lost, keeper, grantedAt } = setupFor('redis');
  return {
    clock: scheduler.clock,
    advance: (ms: number) => scheduler.advance(ms),
    calls,
    lost,
    keeper,
    grantedAt,
  };
}

describe('LeaseKeeper: the store named in what it reports', () => {
  it('fences at last confirmed send + TTL - margin with a LeaseLostError naming the store, and never unfences', async () => {
    const { advance, calls, lost, keeper, grantedAt, clock } = storeSetup();
    keeper.start();
    await advance(400);
    calls[0]!.resolve(); // sent at grantedAt + 400: trusted until + 1900
    await advance(1499 - 400 + 400);
    expect(lost).toEqual([]);
    await advance(1);
    expect(clock.now()).toBe(grantedAt + 400 + 1500);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseLostError);
    expect(lost[0]!.store).toBe('redis');
    expect(lost[0]!.kind).toBe('deadline');
    calls.at(-1)?.resolve();
    await advance(0);
    expect(keeper.check()).toBe(false);
  });

  it('a keepalive rejected with a LeaseLostError is passed on as is; any other failure is keepalive-failed', async () => {
    const a = storeSetup();
    a.keeper.start();
    await a.advance(400);
    const gone = new LeaseLostError('redis', 'key-lost', 'the key was taken');
    a.calls[0]!.reject(gone);
    await a.advance(0);
    expect(a.lost).toEqual([gone]);
    const b = storeSetup();
    b.keeper.start();
    await b.advance(400);
    b.calls[0]!.reject(new Error('ECONNREFUSED'));
    await b.advance(0);
    expect(b.lost[0]!.kind).toBe('keepalive-failed');
    expect(b.lost[0]!.message).toMatch(/^redis: a keepalive failed: ECONNREFUSED/);
    expect(b.lost[0]!.store).toBe('redis');
  });
});
