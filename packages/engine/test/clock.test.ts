import { describe, expect, it } from 'vitest';
import { checkClock, FakeClock, monotonicClock, sleep, sleepSync, wallClock } from '../src/clock.js';
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
