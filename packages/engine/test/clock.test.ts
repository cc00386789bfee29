import { describe, expect, it, vi } from 'vitest';
import {
  checkClock,
  FakeClock,
  hiResWallClock,
  monotonicClock,
  sleep,
  sleepSync,
  wallClock,
} from '../src/clock.js';
import { InvalidArgumentError } from '../src/errors.js';

describe('FakeClock', () => {
  it('stands still until moved, moves back when set back, and sleeps by moving forward', async () => {
    const clock = new FakeClock(new Date('2026-01-01T00:00:00Z'));
    const start = clock.now();
    expect(clock.now()).toBe(start);
    clock.advance(25);
    expect(clock.now()).toBe(start + 25);
    clock.set(start - 1000);
    expect(clock.now()).toBe(start - 1000);
    await clock.sleep(40);
    clock.sleepSync(2);
    expect(clock.now()).toBe(start - 958);
    expect(clock.sleeps).toEqual([40, 2]);
  });

  it('rejects non-finite times', () => {
    expect(() => new FakeClock(Number.NaN)).toThrow(InvalidArgumentError);
    expect(() => new FakeClock(0).advance(Number.POSITIVE_INFINITY)).toThrow(/received Infinity/);
  });
});

describe('hiResWallClock', () => {
  // Fake sources: the wall clock in whole ms (it can be stepped), the monotonic timer in fractions.
  function sources(wallMs: number) {
    const s = { wall: wallMs, mono: 5000.25, wallReads: 0 };
    return {
      s,
      clock: hiResWallClock({
        wall: () => {
          s.wallReads++;
          return Math.floor(s.wall);
        },
        monotonic: () => s.mono,
      }),
      tick(ms: number) {
        s.wall += ms;
        s.mono += ms;
      },
    };
  }

  it('has sub-millisecond resolution where Date.now() has whole milliseconds', () => {
    const { clock, tick } = sources(1_000_000.4);
    const a = clock.now();
    tick(0.3);
    const b = clock.now();
    expect(b - a).toBeCloseTo(0.3, 9);
    expect(Number.isInteger(b)).toBe(false);
  });

  it('reads the wall clock at most once per millisecond of monotonic time', () => {
    const { s, clock, tick } = sources(1_000_000);
    const before = s.wallReads;
    for (let i = 0; i < 100; i++) {
      clock.now();
      tick(0.05);
    }
    // 100 reads over 5 ms of monotonic time: about 5 wall reads, not 100.
    expect(s.wallReads - before).toBeLessThanOrEqual(6);
  });

  it('follows the wall clock when it is stepped back, and forward', () => {
    const { s, clock, tick } = sources(1_000_000);
    clock.now();
    s.wall -= 3_600_000;
    tick(1);
    expect(Math.abs(clock.now() - s.wall)).toBeLessThan(1);
    s.wall += 90_000;
    tick(1);
    expect(Math.abs(clock.now() - s.wall)).toBeLessThan(1);
  });

  it("anchors on the sources' origin when they have one: the sub-ms time, not Date.now() truncated", () => {
    // True time 1,000,000.7 ms; the wall clock says 1,000,000. Anchored on wall - monotonic the
    // clock would read 0.7 ms late, each thread by its own amount; on the origin it is exact.
    const s = { mono: 5000.25 };
    const trueAt = (mono: number) => 1_000_000.7 + (mono - 5000.25);
    const withOrigin = hiResWallClock({
      wall: () => Math.floor(trueAt(s.mono)),
      monotonic: () => s.mono,
      origin: () => trueAt(0),
    });
    const withoutOrigin = hiResWallClock({ wall: () => Math.floor(trueAt(s.mono)), monotonic: () => s.mono });
    expect(withOrigin.now()).toBeCloseTo(trueAt(s.mono), 6);
    expect(withoutOrigin.now()).toBeCloseTo(trueAt(s.mono) - 0.7, 6);
    // A stepped wall clock still wins over the origin.
    const stepped = hiResWallClock({
      wall: () => 2_000_000,
      monotonic: () => s.mono,
      origin: () => trueAt(0),
    });
    expect(Math.abs(stepped.now() - 2_000_000)).toBeLessThan(1);
  });

  it('ignores disagreements under a millisecond instead of jittering', () => {
    const { s, clock, tick } = sources(1_000_000);
    const start = clock.now();
    s.wall += 0.9; // the wall clock slews ahead a little
    tick(1);
    expect(clock.now() - start).toBeCloseTo(1, 9);
  });
});

describe('real clocks', () => {
  it('the monotonic clock starts at the wall clock and never goes back', () => {
    const clock = monotonicClock();
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(50);
    let last = clock.now();
    for (let i = 0; i < 10_000; i++) {
      const now = clock.now();
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
  });

  it('checkClock accepts the built-in clocks', () => {
    expect(checkClock(wallClock)).toBe(wallClock);
    expect(() => checkClock({ now: () => 1, sleep: 5 })).toThrow(/clock.sleep: expected a function/);
  });
});

describe('waits', () => {
  // A busy loop would burn about as much CPU as the wait lasts; Atomics.wait burns next to none.
  it('sleepSync blocks for the time asked without spinning the CPU', () => {
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    sleepSync(120);
    const waited = performance.now() - start;
    const cpu = process.cpuUsage(cpuBefore);
    expect(waited).toBeGreaterThanOrEqual(119);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(40);
  });

  it('sleep lets timers fire while it waits', async () => {
    let fired = false;
    setTimeout(() => {
      fired = true;
    }, 1);
    await sleep(30);
    expect(fired).toBe(true);
  });
});

describe('sleep (the default async wait)', () => {
  it('waits with a timer for the bulk and polls with setImmediate for the last 1.5 ms, resolving only once the time is reached', async () => {
    let now = 1000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    const timeout = vi.spyOn(globalThis, 'setTimeout');
    const immediate = vi.spyOn(globalThis, 'setImmediate');
    try {
      let done = false;
      const waiting = sleep(5.25).then(() => {
        done = true;
      });
      expect(timeout).toHaveBeenCalledTimes(1);
      expect(timeout.mock.calls[0]![1]).toBe(3.75);
      // The timer fires; the time is not there yet: it polls, once per turn of the loop.
      now += 4;
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(done).toBe(false);
      const polls = immediate.mock.calls.length;
      await new Promise((resolve) => setImmediate(resolve));
      expect(immediate.mock.calls.length).toBeGreaterThan(polls);
      expect(done).toBe(false);
      now += 1.25;
      await waiting;
      expect(done).toBe(true);

      // A wait shorter than the tail polls from the start; with no tail, a timer rounded up.
      timeout.mockClear();
      const short = sleep(0.4);
      expect(timeout).not.toHaveBeenCalled();
      now += 0.4;
      await short;
      const timerOnly = sleep(7.2, 0);
      expect(timeout.mock.calls.at(-1)![1]).toBe(8);
      now += 7.2;
      await timerOnly;
    } finally {
      clock.mockRestore();
      timeout.mockRestore();
      immediate.mockRestore();
    }
  });
});
