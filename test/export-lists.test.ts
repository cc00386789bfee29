// The public surface of every workspace package, entry by entry, against the committed lists in
// test/exports/: a name added or removed by accident fails here. After changing the surface on
// purpose, rebuild and rewrite the lists with `npm run exports:update` and commit them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countNames, exportLists, LISTS_DIR } from './lib/export-lists.mjs';

const lists = exportLists();

describe('exported names', () => {
  it.each([...lists.keys()])('%s matches the built .d.ts files', (file) => {
    const path = join(LISTS_DIR, file);
    expect(existsSync(path), `${path} is missing: run npm run exports:update`).toBe(true);
    expect(lists.get(file), `the exports changed: run npm run exports:update if on purpose`).toBe(
      readFileSync(path, 'utf8'),
    );
  });

  it('has no list for a package that is gone', () => {
    const committed = readdirSync(LISTS_DIR).filter((name) => name.endsWith('.txt'));
    expect(committed.sort()).toEqual([...lists.keys()].sort());
  });

  it('keeps each flavour at 30 names or fewer', () => {
    for (const [file, entry] of [
      ['sonyflake.txt', '@ids/sonyflake'],
      ['snowflake.txt', '@ids/snowflake'],
    ] as const) {
      expect(countNames(lists.get(file) ?? '').get(entry)).toBeLessThanOrEqual(30);
    }
  });
});
