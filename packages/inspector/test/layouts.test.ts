// The page lists the engine's table of named layouts (the flavour packages that build them also
// carry Node-only code): each must be exactly the layout its package builds.
import { compareLayouts } from '@ids/engine/read';
import { DISCORD_LAYOUT, TWITTER_LAYOUT } from '@ids/snowflake';
import { GO_V2_START_TIME, sonyflakeLayout } from '@ids/sonyflake';
import { describe, expect, it } from 'vitest';
import { BUILT_IN, customLayout, DEFAULT_CUSTOM } from '../src/page/layouts.js';

describe('the layouts the page names', () => {
  it('are the layouts of @ids/sonyflake and @ids/snowflake, in the page order', () => {
    const expected = {
      sonyflake: sonyflakeLayout(),
      'sonyflake-v2': sonyflakeLayout({ startTime: GO_V2_START_TIME }),
      twitter: TWITTER_LAYOUT,
      discord: DISCORD_LAYOUT,
    };
    expect(BUILT_IN.map((l) => l.name)).toEqual(Object.keys(expected));
    for (const named of BUILT_IN) {
      expect(named.layout, named.name).toEqual(expected[named.name as keyof typeof expected]);
    }
  });

  it('end where `ids compare` says: Sonyflake on 2188-11-16', () => {
    const ends = compareLayouts(BUILT_IN.map((l) => l.layout)).map((c) => c.endsAt.toISOString());
    expect(ends).toEqual([
      '2188-11-16T03:28:58.880Z',
      '2199-03-19T03:28:58.880Z',
      '2080-07-10T17:30:30.209Z',
      '2084-09-06T15:47:35.552Z',
    ]);
  });

  it('the custom default is a valid layout named custom; a bad spec throws the engine error', () => {
    expect(customLayout(DEFAULT_CUSTOM).layout.name).toBe('custom');
    expect(() => customLayout({ ...DEFAULT_CUSTOM, timeBits: 50 })).toThrow(
      expect.objectContaining({ code: 'ERR_IDS_INVALID_LAYOUT' }),
    );
  });
});
