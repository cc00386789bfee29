// A new snowflake preset and a new ID encoding are each a change to one file: the preset table
// (packages/snowflake/src/presets.ts) or the encodings table (packages/engine/src/encodings.ts).
// Each test edits only that file in a copy of the package's source and shows that everything
// reading the table (the setting, its type, its error message, the CLI's layout names, the
// encoders and auto-detection) takes the new entry.
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type ChangedCopy, copyWithOneFileChanged } from './lib/one-file-change.js';
import { root } from './lib/workspace.js';

const copies: ChangedCopy[] = [];

/** `text` with `from` replaced by `to`; throws when `from` is not there, so a fixture edit never silently does nothing. */
function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`fixture edit: ${JSON.stringify(from)} not found in the file`);
  return text.replace(from, to);
}
afterAll(() => {
  for (const copy of copies) copy.remove();
});

describe('a new snowflake preset', () => {
  const copy = copyWithOneFileChanged(join(root, 'packages', 'snowflake'), 'presets.ts', (text) =>
    edit(
      text,
      'export const SNOWFLAKE_PRESETS = {',
      `/** A fixture's preset: Twitter's bits from 2020. */
export const FIXTURE_LAYOUT: Layout = defineLayout({ ...TWITTER_LAYOUT, name: 'fixture', epochMs: Date.UTC(2020, 0, 1) });

export const SNOWFLAKE_PRESETS = {
  fixture: FIXTURE_LAYOUT,`,
    ),
  );
  copies.push(copy);

  it('is one file', () => {
    expect(copy.changed).toEqual(['presets.ts']);
  });

  it('is taken by the preset setting, named by its error message, and listed by the CLI', async () => {
    const snowflake = (await import(copy.index)) as typeof import('@ids/snowflake');
    const generator = new snowflake.Snowflake({ preset: 'fixture' as never, machineId: 3 });
    expect(generator.layout.name).toBe('fixture');
    expect(generator.layout.epochMs).toBe(Date.UTC(2020, 0, 1));
    expect(() => new snowflake.Snowflake({ preset: 'nope' as never, machineId: 1 })).toThrow(
      "preset: expected 'fixture', 'twitter' or 'discord', received \"nope\" (string)",
    );
    await generator.close();
    // The CLI reads the table of whatever @ids/snowflake it gets.
    vi.doMock('@ids/snowflake', () => snowflake);
    const { LAYOUT_NAMES, parseLayout } = await import('../packages/cli/src/layouts.js');
    expect(LAYOUT_NAMES).toContain('fixture');
    expect(parseLayout('fixture').layout.epochMs).toBe(Date.UTC(2020, 0, 1));
    vi.doUnmock('@ids/snowflake');
  });
});

describe('a new encoding', () => {
  const copy = copyWithOneFileChanged(join(root, 'packages', 'engine'), 'encodings.ts', (text) =>
    edit(
      edit(text, "  | 'base36';", "  | 'base36'\n  | 'base36upper';"),
      '  base36: {',
      `  base36upper: {
    name: 'base36upper',
    description: 'upper-case base36',
    alphabet: '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    fixedWidth: false,
  },
  base36: {`,
    ),
  );
  copies.push(copy);

  it('is one file', () => {
    expect(copy.changed).toEqual(['encodings.ts']);
  });

  it('encodes, decodes, is listed and is detected', async () => {
    const engine = (await import(copy.index)) as typeof import('@ids/engine');
    const id = 1427970479175499776n;
    const text = engine.encodeId(id, 'base36upper' as never);
    expect(text).toBe(id.toString(36).toUpperCase());
    expect(engine.decodeId(text, 'base36upper' as never)).toBe(id);
    expect(engine.ENCODING_NAMES).toContain('base36upper');
    // Detection tries it too: the text is read by it (and by other alphabets that hold these
    // letters, which then makes it ambiguous, with the new encoding among the candidates).
    let candidates: readonly { id: bigint; encoding: string }[];
    try {
      candidates = [engine.decodeAnyId(text)];
    } catch (error) {
      expect(error).toBeInstanceOf(engine.AmbiguousIdError);
      candidates = (error as InstanceType<typeof engine.AmbiguousIdError>).candidates;
    }
    expect(candidates).toContainEqual({ id, encoding: 'base36upper' });
  });
});
