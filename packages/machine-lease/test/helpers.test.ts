// The small rules both lease stores take from here instead of writing their own: the asked-ID
// check, the recorded-time reading, the call time limit and the scheduler seam.
import { InvalidMachineIdError } from '@ids/engine';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bounded, StoreTimeout } from '../src/bounded.js';
import { LeaseCorruptClaimError } from '../src/errors.js';
import { realScheduler, schedulerOf } from '../src/keeper.js';
import { checkAskedId, readRecordedTime } from '../src/options.js';
import { FakeScheduler } from './fake-scheduler.js';

describe('checkAskedId', () => {
  it('passes integers 0 and up, and names what came otherwise', () => {
    expect(checkAskedId(0)).toBe(0);
    expect(checkAskedId(1023)).toBe(1023);
    for (const bad of [-1, 1.5, Number.NaN, '3', undefined]) {
      expect(() => checkAskedId(bad), String(bad)).toThrow(InvalidMachineIdError);
    }
    expect(() => checkAskedId(-1)).toThrow(
      /expected a machine ID, an integer 0 or more, received -1 \(number\)/,
    );
  });
});

describe('readRecordedTime', () => {
  it('decimal Unix ms come back as a number; anything else is LeaseCorruptClaimError naming the store and key', () => {
    expect(readRecordedTime('etcd', 'k', '1700000000000')).toBe(1_700_000_000_000);
    for (const raw of ['', 'yesterday', '-5', '1.5', '12345678901234567']) {
      let error: unknown;
      try {
        readRecordedTime('etcd', 'ids/time/0', raw);
      } catch (e) {
        error = e;
      }
      expect(error, raw).toBeInstanceOf(LeaseCorruptClaimError);
      expect((error as LeaseCorruptClaimError).key).toBe('ids/time/0');
      expect((error as LeaseCorruptClaimError).store).toBe('etcd');
      expect((error as LeaseCorruptClaimError).code).toBe('ERR_IDS_LEASE_CORRUPT_CLAIM');
      expect((error as Error).message).toMatch(
        /^etcd: the recorded time ids\/time\/0 holds .*expected decimal Unix milliseconds/,
      );
    }
  });
});

describe('bounded', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the answer when it comes in time; StoreTimeout 50 ms after the limit when it does not', async () => {
    vi.useFakeTimers();
    expect(await bounded(100, async () => 'answer')).toBe('answer');
    const silent = bounded(100, () => new Promise<never>(() => undefined));
    const outcome = silent.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(149);
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBeInstanceOf(StoreTimeout);
    expect(vi.getTimerCount()).toBe(0);
  });

  // Node fires a timer of more than 2^31 - 1 ms after 1 ms: the limit timed out before an
  // answer that comes after a few ms. Real timers: the order in which they fire is the test.
  it('a limit past the timer maximum does not time out at once', async () => {
    const answer = () => new Promise<string>((resolve) => setTimeout(() => resolve('answer'), 20));
    expect(await bounded(2 ** 31, answer)).toBe('answer');
    expect(await bounded(1e15, answer)).toBe('answer');
  });

  it('hands the time limit to the call, so steps inside it can race it; the timer is cleared when it settles', async () => {
    vi.useFakeTimers();
    const inner = bounded(10, (timeUp) => Promise.race([new Promise<never>(() => undefined), timeUp]));
    const caught = inner.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(60);
    expect(await caught).toBeInstanceOf(StoreTimeout);
    await bounded(10, async () => undefined);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('schedulerOf', () => {
  it('the real scheduler, unless the options carry one (the tests seam)', () => {
    expect(schedulerOf({})).toBe(realScheduler);
    const fake = new FakeScheduler();
    expect(schedulerOf({ scheduler: fake })).toBe(fake);
  });
});
