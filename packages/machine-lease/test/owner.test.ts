import { describe, expect, it } from 'vitest';
import { currentOwner, readOwner } from '../src/internal.js';

describe('a holder identity', () => {
  it('reads back what currentOwner writes, with whatever a store put beside it', () => {
    const owner = currentOwner();
    expect(owner.pid).toBe(process.pid);
    expect(readOwner(JSON.stringify(owner))).toEqual(owner);
    const withToken = { token: 'ab'.repeat(16), ...owner };
    expect(readOwner(JSON.stringify(withToken))).toEqual(withToken);
  });

  it.each([
    ['not JSON', 'garbage'],
    ['null', 'null'],
    ['a number', '5'],
    ['no host', '{"pid":1,"started":"x"}'],
    ['a pid that is not an integer', '{"host":"h","pid":1.5,"started":"x"}'],
    ['a pid given as text', '{"host":"h","pid":"1","started":"x"}'],
    ['no start time', '{"host":"h","pid":1}'],
  ])('is undefined for %s, so the store can name the key as corrupt', (_, raw) => {
    expect(readOwner(raw)).toBeUndefined();
  });
});
