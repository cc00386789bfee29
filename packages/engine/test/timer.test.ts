import { describe, expect, it, vi } from 'vitest';
import { sleep } from '../src/clock.js';
import { checkGeneratorOptions, IdGenerator } from '../src/generator.js';
import { defineLayout } from '../src/layout.js';
import { setLongTimeout, TIMER_MAX_MS, type TimerHost } from '../src/timer.js';

/**
 * A timer host whose time moves only when the test fires the armed timer: `fireNext` moves the
 * time to the end of the one pending timer and runs it. Every delay armed is recorded.
 */
function fakeHost(start = 5_000) {
  let now = start;
  let pending: { fn: () => void; at: number } | undefined;
  const armed: number[] = [];
  let cleared = 0;
  const host: TimerHost = {
    now: () => now,
    set(fn, ms) {
      // One timer at a time, never a pile of them (a plain check: this runs 465,662 times).
      if (pending !== undefined) throw new Error('a second timer armed while one is pending');
      armed.push(ms);
      pending = { fn, at: now + ms };
      return pending;
    },
    clear(handle) {
      if (handle === pending) {
        pending = undefined;
        cleared++;
      }
    },
  };
  return {
    host,
    armed,
    get now() {
      return now;
    },
    get pending() {
      return pending !== undefined;
    },
    get cleared() {
      return cleared;
    },
    /** Moves the time to the pending timer's end (plus `lateMs`) and runs it. */
    fireNext(lateMs = 0) {
      const timer = pending;
      if (timer === undefined) throw new Error('no timer armed');
      pending = undefined;
      now = timer.at + lateMs;
      timer.fn();
    },
  };
}

/** A long timeout of `ms` armed on a fake host: whether it fired, and how long after it was armed. */
function longWait(ms: number) {
  const fake = fakeHost();
  const start = fake.now;
  let firedAt: number | undefined;
  setLongTimeout(
    () => {
      firedAt = fake.now;
    },
    ms,
    { host: fake.host },
  );
  return { fake, fired: () => firedAt !== undefined, elapsed: () => (firedAt ?? Number.NaN) - start };
}

describe('setLongTimeout', () => {
  it('is one plain timer up to the timer maximum', () => {
    const fake = fakeHost();
    let fired = 0;
    setLongTimeout(() => fired++, TIMER_MAX_MS, { host: fake.host });
    expect(fake.armed).toEqual([TIMER_MAX_MS]);
    fake.fireNext();
    expect(fired).toBe(1);
    expect(fake.pending).toBe(false);
  });

  it.each([
    ['2^31 ms', 2 ** 31, 2],
    ['1e15 ms (timeUnit 1e15)', 1e15, Math.ceil(1e15 / TIMER_MAX_MS)],
  ])(
    'a wait of %s arms pieces of at most the maximum, as few as can be, and fires at its end',
    (_name, ms, pieces) => {
      const { fake, fired, elapsed } = longWait(ms);
      let early = false;
      while (fake.pending) {
        if (fired()) early = true;
        fake.fireNext();
      }
      expect(early).toBe(false);
      expect(fake.armed).toHaveLength(pieces);
      // Every piece is as long as it may be: the maximum, or all that is left.
      expect(fake.armed.slice(0, -1).every((delay) => delay === TIMER_MAX_MS)).toBe(true);
      expect(fake.armed.at(-1)).toBe(ms - (pieces - 1) * TIMER_MAX_MS);
      expect(fake.armed.at(-1)).toBeGreaterThan(0);
      expect(elapsed()).toBe(ms);
    },
  );

  it('re-arms for what is left by the clock, so late pieces do not add up', () => {
    const { fake, elapsed } = longWait(3 * TIMER_MAX_MS);
    fake.fireNext(1000); // a loaded machine: each piece fires a second late
    fake.fireNext(1000);
    fake.fireNext(0);
    expect(fake.armed).toEqual([TIMER_MAX_MS, TIMER_MAX_MS, TIMER_MAX_MS - 2000]);
    expect(elapsed()).toBe(3 * TIMER_MAX_MS);
  });

  it('an abort signal cancels it, between pieces too; an aborted one arms nothing', () => {
    const fake = fakeHost();
    const controller = new AbortController();
    let fired = 0;
    setLongTimeout(() => fired++, 1e15, { host: fake.host, signal: controller.signal });
    fake.fireNext();
    fake.fireNext();
    controller.abort();
    expect(fake.pending).toBe(false);
    expect(fake.cleared).toBe(1);
    expect(fired).toBe(0);
    setLongTimeout(() => fired++, 10, { host: fake.host, signal: controller.signal });
    expect(fake.armed).toHaveLength(3);
  });

  it('the returned function cancels it, and is harmless after it fired', () => {
    const fake = fakeHost();
    let fired = 0;
    const cancel = setLongTimeout(() => fired++, 2 ** 32, { host: fake.host });
    fake.fireNext();
    cancel();
    cancel();
    expect(fake.pending).toBe(false);
    const done = setLongTimeout(() => fired++, 5, { host: fake.host });
    fake.fireNext();
    done();
    expect(fired).toBe(1);
  });

  it('with the real timers, a wait past the maximum arms no overflowing timer (Node would fire it after 1 ms)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    let fired = false;
    const cancel = setLongTimeout(
      () => {
        fired = true;
      },
      2 ** 31,
      { unref: true },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    cancel();
    process.off('warning', onWarning);
    expect(fired).toBe(false);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });
});

describe('sleep past the timer maximum', () => {
  it.each([
    ['2^31 ms', 2 ** 31],
    ['1e15 ms', 1e15],
  ])('a sleep of %s resolves at its end, with bounded pieces and no poll loop', async (_name, ms) => {
    const fake = fakeHost();
    const start = fake.now;
    let resolvedAt = -1;
    const slept = sleep(ms, 0, { timers: fake.host }).then(() => {
      resolvedAt = fake.now;
    });
    let early = false;
    while (fake.pending) {
      if (resolvedAt !== -1) early = true;
      fake.fireNext();
    }
    await slept;
    expect(early).toBe(false);
    expect(resolvedAt - start).toBe(ms);
    expect(fake.armed.length).toBe(Math.ceil(ms / TIMER_MAX_MS));
    expect(fake.armed.every((delay) => delay > 0 && delay <= TIMER_MAX_MS)).toBe(true);
  });

  it('an abort signal ends it: it rejects with the reason and leaves no timer armed', async () => {
    const fake = fakeHost();
    const controller = new AbortController();
    const slept = sleep(1e15, 0, { timers: fake.host, signal: controller.signal });
    fake.fireNext();
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    expect(fake.pending).toBe(false);
    await expect(sleep(5, 0, { timers: fake.host, signal: controller.signal })).rejects.toThrow('stop');
    expect(fake.armed).toHaveLength(2);
  });
});

describe("a generator's wait past the timer maximum", () => {
  // timeUnit 1e15 ms: the first call rolls over into tick 1, 31,700 years away. Before, the wait
  // armed setTimeout(1e15), which Node fires after 1 ms; the wait then polled with setImmediate.
  it('arms a timer of at most the maximum, not one Node would fire after 1 ms', async () => {
    const layout = defineLayout({
      timeBits: 3,
      timeUnitMs: 1e15,
      sequenceBits: 8,
      machineBits: 16,
      epochMs: 0,
    });
    const gen = new IdGenerator(
      checkGeneratorOptions({ layout, machineId: 1, clock: { now: () => Date.UTC(2026, 10, 22) } }),
    );
    const armed: number[] = [];
    const timeout = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((_fn: () => void, ms: number) => {
      armed.push(ms);
      return { unref() {} };
    }) as never);
    try {
      void gen.nextId().catch(() => undefined);
    } finally {
      timeout.mockRestore();
    }
    expect(armed).toEqual([TIMER_MAX_MS]);
    await gen.close();
  });
});
