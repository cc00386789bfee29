import { describe, expect, it } from 'vitest';
import { compareLayouts } from '../src/compare.js';
import { InvalidArgumentError, InvalidLayoutError } from '../src/errors.js';
import { defineLayout } from '../src/layout.js';
import { SONYFLAKE_SPEC, TWITTER_SPEC } from './layouts.js';

const SONYFLAKE = SONYFLAKE_SPEC;
const TWITTER = TWITTER_SPEC;

describe('compareLayouts', () => {
  it('gives each layout its shape and figures, in the order given', () => {
    const [sonyflake, twitter] = compareLayouts([SONYFLAKE, defineLayout(TWITTER)]);
    expect(sonyflake).toMatchObject({
      name: 'sonyflake',
      timeBits: 39,
      timeUnitMs: 10,
      fieldOrder: 'sequence-machine',
      epoch: new Date('2014-09-01T00:00:00.000Z'),
      endsAt: new Date('2188-11-16T03:28:58.880Z'),
      idsPerSecond: 25_600,
      machines: 65_536,
      unsafeNumberFrom: new Date('2014-11-02T03:18:29.120Z'),
    });
    expect(Math.floor(sonyflake!.lifetimeYears)).toBe(174);
    expect(twitter).toMatchObject({
      name: 'twitter',
      fieldOrder: 'machine-sequence',
      machineParts: [
        { name: 'datacenter', bits: 5 },
        { name: 'worker', bits: 5 },
      ],
      endsAt: new Date('2080-07-10T17:30:30.209Z'),
      idsPerSecond: 4_096_000,
      machines: 1024,
    });
    expect(Math.floor(twitter!.lifetimeYears)).toBe(69);
    expect(twitter!.decimalLengths.at(-1)?.digits).toBe(19);
  });

  it('validates specs as defineLayout does, and refuses a non-array', () => {
    expect(() => compareLayouts([{ ...SONYFLAKE, timeBits: 40 }])).toThrow(InvalidLayoutError);
    expect(() => compareLayouts(SONYFLAKE as never)).toThrow(InvalidArgumentError);
    expect(compareLayouts([])).toEqual([]);
  });
});
