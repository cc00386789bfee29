// Every error a flavour's generators and functions can throw is exported from the flavour, so a
// caller catches it with `instanceof` without importing @ids/engine. The test reads the sources a
// flavour's entry reaches (its own files and the engine's, following imports) and finds every
// error class they construct. The errors thrown only while settings are checked (the constructor,
// `create()`, the layout function that reads the same settings) and the machine ID is found may
// come from @ids/engine instead: each of those must be constructed in a settings module only.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as engine from '@ids/engine';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENGINE_ENTRIES: Record<string, string> = {
  '@ids/engine': 'packages/engine/src/index.ts',
  '@ids/engine/flavour': 'packages/engine/src/flavour.ts',
  '@ids/engine/internal': 'packages/engine/src/internal.ts',
  '@ids/engine/read': 'packages/engine/src/read.ts',
};

/**
 * The modules that run only while a generator is being made: the settings checks, the layout
 * built from them, finding and checking the machine ID, loading an optional package.
 */
const SETTINGS_MODULES = new Set([
  'packages/engine/src/check.ts',
  'packages/engine/src/layout.ts',
  'packages/engine/src/machine.ts',
  'packages/engine/src/optional.ts',
  'packages/sonyflake/src/settings.ts',
  'packages/sonyflake/src/machine.ts',
  'packages/snowflake/src/settings.ts',
]);

/** Every source file reachable from `entry` through relative imports and the engine's entries. */
function reachable(entry: string): string[] {
  const seen = new Set<string>();
  const todo = [resolve(root, entry)];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      const target = spec!.startsWith('.')
        ? resolve(dirname(file), spec!.replace(/\.js$/, '.ts'))
        : ENGINE_ENTRIES[spec!] && resolve(root, ENGINE_ENTRIES[spec!]!);
      if (target && existsSync(target)) todo.push(target);
    }
  }
  return [...seen].map((file) => relative(root, file).split('\\').join('/'));
}

/** Each error class of the project constructed in `files` (`new XError(`), with the files that construct it. */
function constructedErrors(files: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of files) {
    for (const [, name] of readFileSync(join(root, file), 'utf8').matchAll(/\bnew (\w+Error)\(/g)) {
      if (name === undefined || name in globalThis) continue; // TypeError and the like are the platform's
      found.set(name!, [...new Set([...(found.get(name!) ?? []), file])]);
    }
  }
  return found;
}

describe.each([
  ['sonyflake', () => import('@ids/sonyflake')],
  ['snowflake', () => import('@ids/snowflake')],
] as const)('@ids/%s', (flavour, load) => {
  const files = reachable(`packages/${flavour}/src/index.ts`);
  const thrown = constructedErrors(files);

  it('reaches the generator and its throw sites', () => {
    // The walk went through the engine: the state machine's errors are among those found.
    expect(files).toContain('packages/engine/src/generator.ts');
    for (const name of [
      'ClockMovedBackwardsError',
      'ClockStalledError',
      'OverTimeLimitError',
      'InvalidIdError',
    ]) {
      expect([...thrown.keys()]).toContain(name);
    }
  });

  it('exports every error its generators and functions can throw; settings errors come from @ids/engine', async () => {
    const exported = await load();
    const missing: string[] = [];
    for (const [name, sites] of thrown) {
      if (name in exported) continue;
      const outside = sites.filter((site) => !SETTINGS_MODULES.has(site));
      if (outside.length > 0) missing.push(`${name} (constructed in ${outside.join(', ')})`);
      else expect(engine, `${name} is thrown while settings are checked`).toHaveProperty(name);
    }
    expect(missing, `export these from @ids/engine/flavour`).toEqual([]);
  });
});
