import { describe, expect, it } from 'vitest';
import {
  InvalidBitsMachineIdError,
  InvalidBitsSequenceError,
  InvalidBitsTimeError,
  InvalidLayoutError,
  InvalidStartTimeError,
  InvalidTimeUnitError,
} from '../src/errors.js';
import { defineLayout, type LayoutSpec, layoutLimits, tickOf, tickStartMs } from '../src/layout.js';
import { type BadInput, eachThrows } from './kit.js';
import { SONYFLAKE_SPEC as SONYFLAKE_2014, TWITTER_SPEC } from './layouts.js';

describe('defineLayout', () => {
  it('derives the constants of the Sonyflake layout', () => {
    const layout = defineLayout(SONYFLAKE_2014);
    expect(layout).toMatchObject({
      epochTick: 140_952_960_000,
      tickLimit: 2 ** 39,
      maxSequence: 255,
      maxMachine: 65_535,
      sequenceScale: 65_536,
      timeShift: 24n,
      maxId: 2n ** 63n - 1n,
    });
    expect(Object.isFrozen(layout)).toBe(true);
  });

  const bad: BadInput<Partial<LayoutSpec>>[] = [
    ['negative sequence bits', { sequenceBits: -1 }, InvalidBitsSequenceError, /0 to 30, received -1/],
    ['fractional sequence bits', { sequenceBits: 2.5 }, InvalidBitsSequenceError, /received 2.5/],
    ['sequence bits 31', { sequenceBits: 31 }, InvalidBitsSequenceError, /received 31/],
    ['machine bits 31', { machineBits: 31 }, InvalidBitsMachineIdError, /received 31/],
    [
      'machine bits as a string',
      { machineBits: '16' as unknown as number },
      InvalidBitsMachineIdError,
      /"16" \(string\)/,
    ],
    ['time unit under 1 ms', { timeUnitMs: 0.001 }, InvalidTimeUnitError, /received 0.001/],
    ['time unit 0', { timeUnitMs: 0 }, InvalidTimeUnitError, /1 or more/],
    ['epoch NaN', { epochMs: Number.NaN }, InvalidStartTimeError, /received NaN/],
    ['epoch past the Date range', { epochMs: 9e15 }, InvalidStartTimeError, /received 9000000000000000/],
    ['time bits 0', { timeBits: 0 }, InvalidBitsTimeError, /1 or more, received 0/],
    ['bits summing past 63', { timeBits: 40 }, InvalidLayoutError, /need 64 bits .*at most 63/],
    [
      'an end past what a Date holds',
      { timeBits: 47, timeUnitMs: 1000, machineBits: 8 },
      InvalidLayoutError,
      /year 275760/,
    ],
  ];

  // Go's separate sentinels are one family here: each row's class is also an InvalidLayoutError.
  eachThrows(
    'rejects %s',
    bad,
    (change) => defineLayout({ ...SONYFLAKE_2014, ...change }),
    InvalidLayoutError,
  );

  it('rejects an unknown field order', () => {
    expect(() => defineLayout({ ...SONYFLAKE_2014, fieldOrder: 'machine-time' as never })).toThrow(
      /fieldOrder: expected 'sequence-machine' or 'machine-sequence', received "machine-time"/,
    );
  });

  it("scales the low fields by the order: Sonyflake's sequence above the machine, Twitter's below", () => {
    expect(defineLayout(SONYFLAKE_2014)).toMatchObject({
      fieldOrder: 'sequence-machine',
      sequenceScale: 2 ** 16,
      machineScale: 1,
    });
    expect(defineLayout({ ...SONYFLAKE_2014, fieldOrder: 'machine-sequence' })).toMatchObject({
      sequenceScale: 1,
      machineScale: 2 ** 8,
    });
  });

  it('checks in Go order: sequence bits are reported before a bad time unit', () => {
    expect(() => defineLayout({ ...SONYFLAKE_2014, sequenceBits: 99, timeUnitMs: 0 })).toThrow(
      InvalidBitsSequenceError,
    );
  });

  it('rejects a layout that is not an object', () => {
    expect(() => defineLayout(null as unknown as LayoutSpec)).toThrow(InvalidLayoutError);
  });

  it('accepts machine parts that add up to the machine bits, and rejects ones that do not', () => {
    const twitter = {
      timeBits: 41,
      timeUnitMs: 1,
      sequenceBits: 12,
      machineBits: 10,
      epochMs: 1288834974657,
    };
    const split = defineLayout({
      ...twitter,
      machineParts: [
        { name: 'datacenter', bits: 5 },
        { name: 'worker', bits: 5 },
      ],
    });
    expect(split.machineParts?.map((p) => p.name)).toEqual(['datacenter', 'worker']);
    expect(() => defineLayout({ ...twitter, machineParts: [{ name: 'worker', bits: 9 }] })).toThrow(
      /sum to 9, expected machineBits = 10/,
    );
    expect(() =>
      defineLayout({
        ...twitter,
        machineParts: [
          { name: 'a', bits: 5 },
          { name: 'a', bits: 5 },
        ],
      }),
    ).toThrow(/distinct non-empty names/);
  });
});

describe('layoutLimits', () => {
  it('Sonyflake with the 2014 epoch lasts 174 years, to 2188-11-16T03:28:58.880Z', () => {
    const limits = layoutLimits(defineLayout(SONYFLAKE_2014));
    expect(limits.lifetimeMs).toBe(5_497_558_138_880);
    expect(limits.lifetimeYears).toBeCloseTo(174.21, 2);
    expect(limits.endsAt.toISOString()).toBe('2188-11-16T03:28:58.880Z');
    expect(limits.idsPerSecond).toBe(25_600);
    expect(limits.machines).toBe(65_536);
  });

  it('Sonyflake with the 2025 epoch ends 2199-03-19T03:28:58.880Z', () => {
    const limits = layoutLimits(defineLayout({ ...SONYFLAKE_2014, epochMs: Date.UTC(2025, 0, 1) }));
    expect(limits.endsAt.toISOString()).toBe('2199-03-19T03:28:58.880Z');
  });

  it("Twitter's snowflake: 4,096,000 IDs/s, 1,024 machines, 69 years", () => {
    const limits = layoutLimits(
      defineLayout({
        timeBits: 41,
        timeUnitMs: 1,
        sequenceBits: 12,
        machineBits: 10,
        epochMs: 1288834974657,
      }),
    );
    expect(limits.idsPerSecond).toBe(4_096_000);
    expect(limits.machines).toBe(1024);
    expect(Math.floor(limits.lifetimeYears)).toBe(69);
  });
});

describe('when IDs outgrow JS numbers and each decimal width', () => {
  it('Sonyflake (2014): unsafe as numbers from 2014-11-02, 19 digits from 2033-07-21', () => {
    const limits = layoutLimits(defineLayout(SONYFLAKE_2014));
    // Tick 2^29 (of 10 ms) is the first whose IDs are all >= 2^53.
    expect(limits.unsafeNumberFrom?.toISOString()).toBe('2014-11-02T03:18:29.120Z');
    const at = (digits: number) => limits.decimalLengths.find((d) => d.digits === digits)?.from.toISOString();
    expect(at(18)).toBe('2016-07-21T20:50:44.780Z');
    expect(at(19)).toBe('2033-07-21T16:27:27.760Z');
    expect(limits.decimalLengths.at(-1)?.digits).toBe(19);
  });

  it("Twitter's: unsafe from 2010-11-28, 19 digits from 2018-05-25", () => {
    const limits = layoutLimits(defineLayout(TWITTER_SPEC));
    expect(limits.unsafeNumberFrom?.toISOString()).toBe('2010-11-28T22:14:18.305Z');
    expect(limits.decimalLengths.at(-1)).toEqual({ digits: 19, from: new Date('2018-05-25T13:05:53.759Z') });
  });

  it('a layout that ends before 2^53 has no unsafe instant and fewer widths', () => {
    const small = defineLayout({
      timeBits: 30,
      timeUnitMs: 1000,
      sequenceBits: 8,
      machineBits: 8,
      epochMs: 0,
    });
    const limits = layoutLimits(small);
    expect(limits.unsafeNumberFrom).toBeNull();
    // The largest ID is 2^46 - 1, 14 digits.
    expect(limits.decimalLengths.at(-1)?.digits).toBe(14);
  });

  it('the instants are exact: the tick before holds a shorter (or safe) ID, the tick itself none', () => {
    for (const spec of [
      SONYFLAKE_2014,
      TWITTER_SPEC,
      { ...TWITTER_SPEC, timeBits: 52, sequenceBits: 2, machineBits: 0, machineParts: undefined },
    ]) {
      const layout = defineLayout(spec);
      const limits = layoutLimits(layout);
      const smallest = (at: Date) => BigInt(tickOf(layout, at.getTime())) << layout.timeShift;
      const largestBefore = (at: Date) => smallest(at) - 1n;
      const unsafe = limits.unsafeNumberFrom!;
      expect(smallest(unsafe)).toBeGreaterThanOrEqual(2n ** 53n);
      expect(largestBefore(unsafe)).toBe(2n ** 53n - 1n);
      for (const { digits, from } of limits.decimalLengths) {
        expect(smallest(from).toString().length).toBeGreaterThanOrEqual(digits);
        const previousTickSmallest = smallest(from) - (1n << layout.timeShift);
        expect(previousTickSmallest.toString().length).toBeLessThan(digits);
      }
    }
  });
});

describe('ticks', () => {
  const layout = defineLayout({ ...SONYFLAKE_2014, epochMs: 1_000_005 });

  it('truncates both the instant and the epoch to whole units, as Go does', () => {
    // Go: now / unit - start / unit, integer divisions. The epoch 1,000,005 ms sits in unit 100,000.
    expect(tickOf(layout, 1_000_000)).toBe(0);
    expect(tickOf(layout, 1_000_009)).toBe(0);
    expect(tickOf(layout, 1_000_010)).toBe(1);
    expect(tickStartMs(layout, 1)).toBe(1_000_010);
  });

  // Go divides UnixNano by the unit in int64, which truncates toward zero: before 1970 that
  // rounds up, where Math.floor rounds down. Expected values worked out by Go's rule.
  it('before 1970, truncates toward zero as Go does, not down', () => {
    // Start 1969-12-31T23:59:59.995Z (-5 ms) in 10 ms units: Go's start is -5 / 10 = 0, not -1.
    const pre = defineLayout({ ...SONYFLAKE_2014, epochMs: Date.parse('1969-12-31T23:59:59.995Z') });
    expect(pre.epochTick).toBe(0);
    expect(tickOf(pre, Date.parse('1970-01-01T00:00:00.005Z'))).toBe(0);
    expect(tickOf(pre, Date.parse('1970-01-01T00:00:00.015Z'))).toBe(1);
    expect(tickOf(pre, Date.parse('1970-01-01T00:00:01.000Z'))).toBe(100);
    // -1 ms / 10 ms truncates to 0: the unit around 1970 spans -10 to +10 ms, exclusive. (JS
    // gives -0 there, which every comparison and BigInt() take as 0; the hot path does not
    // spend an operation on normalising it.)
    expect(tickOf(pre, Date.parse('1969-12-31T23:59:59.999Z')) + 0).toBe(0);
    expect(tickOf(pre, Date.parse('1969-12-31T23:59:59.990Z'))).toBe(-1);
    // Go's ToTime: (start + tick) * unit.
    expect(new Date(tickStartMs(pre, 100)).toISOString()).toBe('1970-01-01T00:00:01.000Z');
    // A start further back: 1969-07-20T20:17:40.123Z is -1,418,293,987.7 units, which Go takes as -1,418,293,987.
    const moon = defineLayout({ ...SONYFLAKE_2014, epochMs: Date.parse('1969-07-20T20:17:40.123Z') });
    expect(moon.epochTick).toBe(-1_418_293_987);
    expect(tickOf(moon, Date.parse('2026-11-22T12:00:00.007Z'))).toBe(180_953_173_987);
    expect(new Date(tickStartMs(moon, 180_953_173_987)).toISOString()).toBe('2026-11-22T12:00:00.000Z');
  });
});
