// Shared by the etcd and Redis tests (issue 22 item 9): a claim whose ID has a time recorded
// ahead of this host's clock says so once, waits for it on the injected clock, and gives up
// with a typed error past maxNotBeforeWaitMs. Everything runs on a FakeScheduler: no sleeps.
import { InvalidArgumentError, type MachineIdClaim } from '@ids/engine';
import { expect, it } from 'vitest';
import type { LeaseTimeAheadError } from '../src/errors.js';
import type { RecordedTimeWait } from '../src/index.js';
import { FakeScheduler } from './fake-scheduler.js';

/** What the cases need from one store's test setup. */
export interface NotBeforeStore {
  /** A prefix of its own for one test. */
  prefix(name: string): string;
  /** Calls the store's provider for a 0-bit field (one ID: 0) with these options. */
  claim(options: Record<string, unknown>): Promise<MachineIdClaim & { release(): Promise<void> }>;
  /** Writes the recorded time of ID 0 under `prefix`, as an earlier holder would. */
  setTime(prefix: string, ms: number): Promise<void>;
  /** Whether the claim key of ID 0 under `prefix` exists. */
  claimed(prefix: string): Promise<boolean>;
  /** LeaseTimeAheadError as the store's package exports it (the one its holder makes). */
  readonly timeAhead: typeof LeaseTimeAheadError;
  /** The store's name, as its errors carry it in `store`. */
  readonly name: string;
  /** RecordedTimeWait as the store's package exports it (the one its holder makes). */
  readonly notice: typeof RecordedTimeWait;
}

// A TTL long enough that no keepalive falls due during a wait of fake time: only the wait's
// own timer fires when the test moves the clock.
const TTL_SECONDS = 600;

export function notBeforeCases(store: NotBeforeStore): void {
  it('a recorded time ahead: said once through onError, the claim handed out only once it has passed', async () => {
    const scheduler = new FakeScheduler();
    const prefix = store.prefix('ahead');
    await store.setTime(prefix, scheduler.wallNow() + 30_000);
    const notices: unknown[] = [];
    let noticed: () => void = () => undefined;
    const said = new Promise<void>((resolve) => {
      noticed = resolve;
    });
    let claim: MachineIdClaim | undefined;
    const pending = store
      .claim({
        prefix,
        ttlSeconds: TTL_SECONDS,
        scheduler,
        onError: (notice: unknown) => {
          notices.push(notice);
          noticed();
        },
      })
      .then((c) => {
        claim = c;
        return c;
      });
    await said;
    const notice = notices[0] as RecordedTimeWait;
    expect(notice).toBeInstanceOf(store.notice);
    expect(notice.machineId).toBe(0);
    expect(notice.waitMs).toBe(30_001);
    expect(notice.message).toMatch(
      /^waiting 30001 ms before issuing: the time recorded for machine ID 0 in .+ is ahead of this host's clock \(at most maxNotBeforeWaitMs = 660000 ms\)$/,
    );
    expect(await store.claimed(prefix)).toBe(true); // held meanwhile: nobody else can take it
    await scheduler.advance(30_000);
    expect(claim).toBeUndefined();
    await scheduler.advance(1);
    const held = await pending;
    expect(held.machineId).toBe(0);
    expect(held.notBefore).toBe(notice.notBefore);
    expect(notices).toHaveLength(1);
    await held.release();
  });

  it('a recorded time further ahead than maxNotBeforeWaitMs: the typed error, the claim let go', async () => {
    const scheduler = new FakeScheduler();
    const prefix = store.prefix('too-far');
    const recorded = scheduler.wallNow() + 3_600_000; // an earlier holder's clock an hour ahead
    await store.setTime(prefix, recorded);
    const notices: unknown[] = [];
    const error = await store
      .claim({
        prefix,
        ttlSeconds: TTL_SECONDS,
        scheduler,
        maxNotBeforeWaitMs: 5_000,
        onError: (n: unknown) => notices.push(n),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(store.timeAhead);
    expect((error as LeaseTimeAheadError).store).toBe(store.name);
    expect((error as Error).message).toContain(
      `the time recorded for machine ID 0 in ${(error as Error).message.split(' in ')[1]?.split(' (')[0]} (${new Date(recorded).toISOString()}) is 3600001 ms ahead of this host's clock`,
    );
    expect((error as Error).message).toContain('expected at most maxNotBeforeWaitMs = 5000 ms');
    expect(notices).toHaveLength(0);
    expect(await store.claimed(prefix)).toBe(false);
  });

  it('the default bound is the TTL plus 60,000 ms', async () => {
    const scheduler = new FakeScheduler();
    const prefix = store.prefix('default-bound');
    await store.setTime(prefix, scheduler.wallNow() + 10_000 + 60_000); // waits 70,001 ms: one past
    const error = await store.claim({ prefix, ttlSeconds: 10, scheduler }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(store.timeAhead);
    expect((error as LeaseTimeAheadError).store).toBe(store.name);
    expect((error as Error).message).toContain('maxNotBeforeWaitMs = 70000 ms');
  });

  it('a recorded time in the past costs no wait and no notice', async () => {
    const scheduler = new FakeScheduler();
    const prefix = store.prefix('past');
    await store.setTime(prefix, scheduler.wallNow() - 1);
    const notices: unknown[] = [];
    const held = await store.claim({
      prefix,
      ttlSeconds: TTL_SECONDS,
      scheduler,
      onError: (n: unknown) => notices.push(n),
    });
    expect(notices).toHaveLength(0);
    await held.release();
  });

  it('bad values of maxNotBeforeWaitMs and onError are typed errors, at once', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '1000']) {
      let thrown: unknown;
      try {
        void store.claim({ maxNotBeforeWaitMs: bad });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(bad)).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as InvalidArgumentError).option).toBe('maxNotBeforeWaitMs');
      expect((thrown as Error).message).toMatch(
        /^maxNotBeforeWaitMs: expected an integer from 0 to 2,147,483,647, received /,
      );
    }
    expect(() => store.claim({ onError: 'log' })).toThrow(InvalidArgumentError);
    expect(() => store.claim({ onError: 'log' })).toThrow(
      'onError: expected a function that takes an error, received "log" (string)',
    );
  });
}
