// The table of named layouts: keys, aliases and lookups. That its entries are the layouts
// @ids/sonyflake and @ids/snowflake build is checked where those packages are at hand (the
// inspector's test/layouts.test.ts); that a new entry reaches the CLI, the server and the
// inspector page, in test/one-file-change.test.ts.
import { describe, expect, it } from 'vitest';
import { LAYOUT_NAMES, NAMED_LAYOUTS, namedLayout } from '../src/named-layouts.js';

describe('the named layouts', () => {
  it('are listed under their own names, aliases after them, each found by name or alias', () => {
    for (const [key, entry] of Object.entries(NAMED_LAYOUTS)) {
      expect(entry.name).toBe(key);
      expect(namedLayout(key)).toBe(entry);
    }
    expect(LAYOUT_NAMES).toEqual(['sonyflake', 'sonyflake-v2', 'twitter', 'discord', 'snowflake']);
    expect(namedLayout('snowflake')).toBe(NAMED_LAYOUTS.twitter);
    expect(namedLayout('instagram')).toBeUndefined();
    expect(namedLayout('toString')).toBeUndefined();
  });
});
