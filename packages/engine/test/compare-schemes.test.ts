import { describe, expect, it } from 'vitest';
import { compareSchemes, NON_LAYOUT_SCHEMES } from '../src/compare.js';
import { InvalidLayoutError } from '../src/errors.js';
import { SONYFLAKE_SPEC, TWITTER_SPEC } from './layouts.js';

describe('compareSchemes', () => {
  it('lists UUIDv4, UUIDv7, ULID and segment, then a row per layout derived from its limits', () => {
    const rows = compareSchemes([SONYFLAKE_SPEC, TWITTER_SPEC]);
    expect(rows.map((r) => r.name)).toEqual(['uuidv4', 'uuidv7', 'ulid', 'segment', 'sonyflake', 'twitter']);
    const [uuidv4, uuidv7, ulid, segment, sonyflake, twitter] = rows;
    expect(uuidv4).toMatchObject({
      bits: 128,
      sortableByTime: false,
      fitsSignedInt64: false,
      reveals: 'nothing',
    });
    expect(uuidv7).toMatchObject({ bits: 128, sortableByTime: true, fitsSignedInt64: false });
    expect(ulid).toMatchObject({ bits: 128, sortableByTime: true, fitsSignedInt64: false });
    expect(segment).toMatchObject({ bits: 63, sortableByTime: false, fitsSignedInt64: true });
    expect(segment!.reveals).toMatch(/volume/);
    expect(sonyflake).toMatchObject({
      bits: 63,
      sortableByTime: true,
      idsPerSecond: 25_600,
      coordination: 'a machine ID unique among 65,536',
      lifetime: '174 years (to 2188-11-16)',
      fitsSignedInt64: true,
    });
    expect(twitter).toMatchObject({
      bits: 63,
      idsPerSecond: 4_096_000,
      lifetime: '69 years (to 2080-07-10)',
    });
  });

  it('without layouts gives the four non-layout schemes; the data is frozen', () => {
    expect(compareSchemes()).toEqual([...NON_LAYOUT_SCHEMES]);
    expect(Object.isFrozen(NON_LAYOUT_SCHEMES)).toBe(true);
  });

  it('validates layouts as compareLayouts does', () => {
    expect(() =>
      compareSchemes([{ timeBits: 10, timeUnitMs: 10, sequenceBits: 8, machineBits: 16 } as never]),
    ).toThrow();
    expect(() => compareSchemes([{ ...SONYFLAKE_SPEC, timeBits: 60 }])).toThrow(InvalidLayoutError);
  });
});
