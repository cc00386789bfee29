// What every lock store keeps, written once: each store's tests run these with what differs
// between the stores (how to see a name's line, which server to pause, what the holder dials).
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import { fencedSet, type Lock, type Locks } from '../src/index.js';
import { aborted, type FakeScheduler, fixture, until, WAIT_MS } from './helpers.js';

/**
 * A holder of `orders:42`, a refused tryAcquire, then four waiters, each joining once the one
 * before is in line (`inLine(n)`: whether the line of the name holds `n`, the holder included).
 * They are served in the order they came, each with a higher fence than the one before.
 * `held` looks at the first holder in the store's own terms, after the refusal.
 */
export async function waitersServedInOrder(
  locks: Locks,
  inLine: (n: number) => Promise<boolean>,
  held: (first: Lock) => Promise<void> = async () => undefined,
): Promise<void> {
  const first = await locks.acquire('orders:42', { ttlMs: 5000 });
  expect(await locks.tryAcquire('orders:42', { ttlMs: 5000 })).toBeUndefined();
  await held(first);
  const order: number[] = [];
  const fences: bigint[] = [first.fence];
  const waiters: Promise<void>[] = [];
  for (let i = 0; i < 4; i++) {
    waiters.push(
      locks.acquire('orders:42', { ttlMs: 5000, waitMs: WAIT_MS }).then(async (lock) => {
        order.push(i);
        fences.push(lock.fence);
        await lock.release();
      }),
    );
    await until(() => inLine(i + 2), WAIT_MS, `waiter ${i} in line`);
  }
  await first.release();
  await Promise.all(waiters);
  expect(order).toEqual([0, 1, 2, 3]);
  for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1] as bigint);
}

/**
 * With its keepalives unanswered (`server` paused), a lock of a 10 s TTL on the injected clock
 * is trusted until 8,000 ms (the margin is a fifth of the TTL), then its signal aborts with the
 * deadline LeaseLostError of `store`, and check() throws.
 */
export async function abortsAtDeadline(
  locks: Locks,
  scheduler: FakeScheduler,
  server: { pause(): void; resume(): void },
  store: string,
): Promise<void> {
  const lock = await locks.acquire('d', { ttlMs: 10_000 });
  server.pause();
  try {
    await scheduler.advance(7999);
    expect(lock.signal.aborted).toBe(false);
    await scheduler.advance(1);
    await aborted(lock.signal);
    expect(lock.signal.reason).toMatchObject({ name: 'LeaseLostError', store, kind: 'deadline' });
    expect(() => lock.check()).toThrow(expect.objectContaining({ kind: 'deadline' }));
  } finally {
    server.resume();
  }
  await lock.release();
}

/** The lease of the paused holder and of the next one. */
const PAUSED_TTL_MS = 2000;

/**
 * Kleppmann's case. A holder of `orders:42` (test/fixtures/holder.mjs on `store` at `endpoint`)
 * is SIGSTOPped past its lease: the next holder, from `open()`, gets a higher fence and writes
 * `<prefix>:resource` in the Redis that guards it; resumed, the paused holder finds its signal
 * aborted (a LeaseLostError of `store`, of one of `kinds`) and its late write refused, and exits 0.
 * `nextAlone` checks that its release on the way out left the next holder's lock in place.
 */
export async function pausedHolderFenced(o: {
  store: string;
  endpoint: string;
  prefix: string;
  guard: { readonly server: { readonly url: string }; readonly admin: Redis };
  open: () => Promise<Locks>;
  kinds: string;
  nextAlone: () => Promise<void>;
}): Promise<void> {
  // The prefix is the test's own, so the guarded key is too.
  const key = `${o.prefix}:resource`;
  const paused = fixture('holder.mjs', [
    o.store,
    o.endpoint,
    o.prefix,
    'orders:42',
    String(PAUSED_TTL_MS),
    o.guard.server.url,
    key,
  ]);
  const locks = await o.open();
  try {
    const first = BigInt((await paused.line(/^held /)).slice(5));
    paused.child.kill('SIGSTOP');
    // Waits, event-driven, until the store lets the paused holder's lease go.
    const next = await locks.acquire('orders:42', { ttlMs: PAUSED_TTL_MS, waitMs: WAIT_MS });
    expect(next.fence).toBeGreaterThan(first);
    expect(await fencedSet(o.guard.admin, key, next.fence, 'next')).toBe(true);
    paused.child.kill('SIGCONT');
    paused.child.stdin!.end('write\n');
    expect(await paused.line(/^aborted /)).toMatch(
      new RegExp(`^aborted true LeaseLostError ${o.store} (${o.kinds}) wrote false$`),
    );
    expect(await o.guard.admin.get(key)).toBe('next');
    expect(await paused.exited).toBe(0);
    await o.nextAlone();
    expect(() => next.check()).not.toThrow();
    await next.release();
  } finally {
    paused.child.kill('SIGCONT');
    paused.child.kill('SIGKILL');
    await locks.close();
  }
}
