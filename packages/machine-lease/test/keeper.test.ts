// The fencing rule of the store-agnostic keeper, on an injected clock: the keepalive is a
// function the test answers by hand, and a lost lease is reported with the store's own error.
import { FakeClock } from '@ids/engine';
import { describe, expect, it } from 'vitest';
import {
  type LeaseErrors,
  LeaseKeeper,
  type LeaseLossKind,
  type LeaseLost,
  type Scheduler,
} from '../src/index.js';

class StoreLost extends Error implements LeaseLost {
  constructor(
    readonly kind: LeaseLossKind,
    message: string,
  ) {
    super(message);
  }
}
const errors: Pick<LeaseErrors, 'lost' | 'isLost'> = {
  lost: (kind, message) => new StoreLost(kind, message),
  isLost: (error): error is StoreLost => error instanceof StoreLost,
};

/** Timers on a FakeClock, run by `advance` in order. */
function fakeScheduler() {
  const clock = new FakeClock(1_000_000);
  let timers: { at: number; fn: () => void; off: boolean }[] = [];
  const scheduler: Scheduler = {
    now: () => clock.now(),
    setTimer(fn, ms) {
      const t = { at: clock.now() + Math.max(0, ms), fn, off: false };
      timers.push(t);
      return () => {
        t.off = true;
      };
    },
  };
  async function advance(ms: number) {
    const end = clock.now() + ms;
    for (;;) {
      for (let i = 0; i < 10; i++) await Promise.resolve();
      const next = timers.filter((t) => !t.off && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      next.off = true;
      clock.set(next.at);
      next.fn();
    }
    clock.set(end);
    timers = timers.filter((t) => !t.off);
  }
  return { clock, scheduler, advance };
}

function setup() {
  const { clock, scheduler, advance } = fakeScheduler();
  const calls: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const lost: LeaseLost[] = [];
  const grantedAt = clock.now();
  const keeper = new LeaseKeeper(
    { ttlMs: 2000, marginMs: 500, intervalMs: 400, timeoutMs: 3000 },
    scheduler,
    () => new Promise<void>((resolve, reject) => calls.push({ resolve, reject })),
    (reason) => lost.push(reason),
    grantedAt,
    errors,
  );
  return { clock, advance, calls, lost, keeper, grantedAt };
}

describe('LeaseKeeper (store-agnostic)', () => {
  it('fences at last confirmed send + TTL - margin with the store’s own error, and never unfences', async () => {
    const { advance, calls, lost, keeper, grantedAt, clock } = setup();
    keeper.start();
    await advance(400);
    calls[0]!.resolve(); // sent at grantedAt + 400: trusted until + 1900
    await advance(1499 - 400 + 400);
    expect(lost).toEqual([]);
    await advance(1);
    expect(clock.now()).toBe(grantedAt + 400 + 1500);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(StoreLost);
    expect(lost[0]!.kind).toBe('deadline');
    calls.at(-1)?.resolve();
    await advance(0);
    expect(keeper.check()).toBe(false);
  });

  it('a keepalive rejected with the store’s lost error is passed on as is; any other failure is keepalive-failed', async () => {
    const a = setup();
    a.keeper.start();
    await a.advance(400);
    const gone = new StoreLost('key-lost', 'the key was taken');
    a.calls[0]!.reject(gone);
    await a.advance(0);
    expect(a.lost).toEqual([gone]);
    const b = setup();
    b.keeper.start();
    await b.advance(400);
    b.calls[0]!.reject(new Error('ECONNREFUSED'));
    await b.advance(0);
    expect(b.lost[0]!.kind).toBe('keepalive-failed');
    expect(b.lost[0]!.message).toMatch(/a keepalive failed: ECONNREFUSED/);
  });
});
