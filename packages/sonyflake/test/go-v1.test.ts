// The tests of Go's sony/sonyflake v1 (sonyflake_test.go), one named case each, on our API.
// Go reads the real clock and sleeps; here the clock is injected and sleeping moves it.
import {
  FakeClock,
  InvalidMachineIdError,
  MachineIdProviderError,
  MachineIdRejectedError,
  StartTimeAheadError,
} from '@ids/engine';
import { describe, expect, it } from 'vitest';
import { compose, decompose, elapsedTime, machineId, Sonyflake, sequenceNumber } from '../src/index.js';
import { DEFAULT_TIME_UNIT } from '../src/settings.js';
import { GO_MOCK_MACHINE_ID, oneCaller, pastTheTimeLimit, runningClock } from './helpers.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0, 3);

describe('GO_V1 TestNew', () => {
  it('failure: time ahead', async () => {
    const clock = new FakeClock(NOW);
    await expect(Sonyflake.create({ startTime: NOW + 60_000, clock, machineId: 1 })).rejects.toThrow(
      StartTimeAheadError,
    );
  });

  it('failure: machine ID (the provider error is passed through as the cause)', async () => {
    const genError = new Error('an error occurred while generating ID');
    const attempt = Sonyflake.create({
      machineId: () => {
        throw genError;
      },
    });
    await expect(attempt).rejects.toThrow(MachineIdProviderError);
    await expect(attempt).rejects.toMatchObject({ cause: genError });
  });

  it('failure: invalid machine ID (check returns false)', async () => {
    const attempt = Sonyflake.create({ machineId: GO_MOCK_MACHINE_ID, checkMachineId: () => false });
    await expect(attempt).rejects.toThrow(MachineIdRejectedError);
    await expect(attempt).rejects.toBeInstanceOf(InvalidMachineIdError);
  });

  it('success: zero settings (with the mock interface list for the default machine ID)', async () => {
    const sf = await Sonyflake.create({
      bitsSequence: 0,
      bitsMachineId: 0,
      timeUnit: 0,
      machineId: GO_MOCK_MACHINE_ID,
    });
    expect(sf.layout).toMatchObject({ timeBits: 39, sequenceBits: 8, machineBits: 16, timeUnitMs: 10 });
    expect(sf.machine).toBe(1);
  });
});

describe('GO_V1 TestSonyflakeOnce', () => {
  it('an ID taken 50 ticks after the start has time 50, sequence 0 and the machine ID', () => {
    const clock = new FakeClock(NOW);
    const sf = new Sonyflake({ startTime: NOW, clock, machineId: GO_MOCK_MACHINE_ID });
    clock.advance(50 * DEFAULT_TIME_UNIT);
    const id = sf.nextIdSync();
    expect(sf.elapsedTime(id)).toBeGreaterThanOrEqual(50 * DEFAULT_TIME_UNIT);
    expect(sf.elapsedTime(id)).toBeLessThanOrEqual(51 * DEFAULT_TIME_UNIT);
    expect(sf.sequenceNumber(id)).toBe(0);
    expect(sf.machineId(id)).toBe(1);
  });
});

describe('GO_V1 TestSonyflakeFor10Sec', () => {
  it('over 1000 ticks: no duplicate, increasing, msb 0, never ahead of the clock, max sequence 255', () => {
    const clock = runningClock(NOW, 0.03);
    const sf = new Sonyflake({ startTime: NOW, clock, machineId: GO_MOCK_MACHINE_ID });
    const initial = sf.layout.epochTick;
    const problems = { notIncreasing: 0, msb: 0, overtime: 0, machine: 0 };
    let lastId = -1n;
    let maxSequence = 0;
    let count = 0;
    for (let current = initial; current - initial < 1000; ) {
      const id = sf.nextIdSync();
      count++;
      if (id <= lastId) problems.notIncreasing++;
      lastId = id;
      current = Math.floor(clock.now() / DEFAULT_TIME_UNIT);
      const parts = sf.decompose(id);
      if (id >> 63n !== 0n) problems.msb++;
      // The ID's tick is never ahead of the clock read after the call.
      if (initial + parts.time - current > 0) problems.overtime++;
      if (parts.machine !== 1) problems.machine++;
      maxSequence = Math.max(maxSequence, parts.sequence);
    }
    expect(problems).toEqual({ notIncreasing: 0, msb: 0, overtime: 0, machine: 0 });
    expect(maxSequence).toBe(255);
    expect(count).toBeGreaterThan(200_000);
  });
});

describe('GO_V1 TestSonyflakeInParallel', () => {
  it('10 concurrent callers x 10,000 IDs: no duplicate', async () => {
    const sf = new Sonyflake({ clock: runningClock(NOW), machineId: GO_MOCK_MACHINE_ID });
    const all = (await Promise.all(Array.from({ length: 10 }, () => oneCaller(sf, 10_000)))).flat();
    expect(new Set(all).size).toBe(100_000);
  });
});

describe('GO_V1 TestNextIDError', () => {
  it('174 years after the start time works, 175 years is over the time limit', () => {
    const { sf, last } = pastTheTimeLimit(NOW);
    expect(typeof last).toBe('bigint');
    expect(() => sf.nextIdSync()).toThrow(/over the time limit/);
  });
});

describe('GO_V1 TestSonyflakeTimeUnit', () => {
  it('the time unit is 10 ms', () => {
    expect(DEFAULT_TIME_UNIT).toBe(10);
    expect(new Sonyflake({ machineId: 1 }).layout.timeUnitMs).toBe(10);
  });
});

describe('GO_V1 TestCompose', () => {
  it('compose(now, 123, 456) decomposes back, with start 2023-01-01', () => {
    const start = Date.UTC(2023, 0, 1);
    const clock = new FakeClock(NOW);
    const sf = new Sonyflake({ startTime: start, clock, machineId: 1 });
    const id = sf.compose(NOW, 123, 456);
    const parts = sf.decompose(id);
    expect(parts.time).toBe(Math.floor(NOW / 10) - Math.floor(start / 10));
    expect(parts.sequence).toBe(123);
    expect(parts.machine).toBe(456);
  });

  it('the package-level helpers read default-layout IDs like Go v1 functions', () => {
    const id = compose(Date.UTC(2014, 8, 1) + 10, 1, 1);
    expect(id).toBe(16_842_753n);
    expect(decompose(id)).toEqual({ id, time: 1, sequence: 1, machine: 1 });
    expect(elapsedTime(id)).toBe(10);
    expect(sequenceNumber('16842753')).toBe(1);
    expect(machineId(id)).toBe(1);
  });
});
