// Every export of every package has a documentation comment, and so does every public member of
// an exported interface, class or object type: what editors show on hover is the reference users
// read first. Read from the built declarations (what is published), for each entry of each
// package's `exports` map; packages are found on disk, so one added later is covered too.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DeclaredPackage, undocumentedExports } from './lib/tsdoc.js';
import { workspacePackages } from './lib/workspace.js';

/** The declaration files of a package's `exports` map (import condition; require's are the same text). */
function declarationEntries(dir: string, manifest: Record<string, unknown>): string[] {
  const exportsField = (manifest.exports ?? {}) as Record<string, unknown>;
  const files = Object.entries(exportsField)
    .filter(([subpath]) => !subpath.endsWith('.json'))
    .map(([subpath, target]) => {
      const record = (target ?? {}) as Record<string, unknown>;
      const branch = (record.import ?? record) as Record<string, unknown>;
      if (typeof branch.types !== 'string') throw new Error(`${manifest.name} "${subpath}" names no types`);
      return join(dir, branch.types);
    });
  for (const file of files)
    if (!existsSync(file)) throw new Error(`${file} is missing: npm test builds every package first`);
  return files;
}

describe('documentation comments', () => {
  it('are on every export of every package, and on the public members of its types', () => {
    const packages: DeclaredPackage[] = workspacePackages('packages').map((pkg) => ({
      name: pkg.name,
      dir: pkg.dir,
      entries: declarationEntries(pkg.dir, pkg.manifest),
    }));
    expect(packages.length).toBeGreaterThan(0);
    // Subpath entries are read too (the engine's ./internal beside its main entry).
    expect(packages.find((pkg) => pkg.name === '@ids/engine')?.entries.length).toBeGreaterThan(1);
    const report = [...undocumentedExports(packages)].flatMap(([name, missing]) =>
      missing.map((path) => `${name}: ${path}`),
    );
    expect(report, `undocumented:\n${report.join('\n')}`).toEqual([]);
  });

  it('reports what lacks a comment, and leaves private, inherited and re-exported names to their owner', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'ids-tsdoc-'));
    try {
      const base = join(scratch, 'base');
      const pkg = join(scratch, 'pkg');
      mkdirSync(base);
      mkdirSync(pkg);
      // Another package's undocumented class: not pkg's to document, even though pkg re-exports it.
      writeFileSync(
        join(base, 'index.d.ts'),
        'export declare class Base {\n  inherited(): void;\n  /** Documented. */\n  open(): void;\n}\n',
      );
      writeFileSync(
        join(pkg, 'index.d.ts'),
        [
          "import { Base } from '../base/index.js';",
          "export { Base } from '../base/index.js';",
          '/** Documented. */',
          'export declare const documented = 1;',
          'export declare const bare = 2;',
          '/** An interface. */',
          'export interface Shape {',
          '  /** Documented member. */',
          '  readonly x: number;',
          '  readonly y: number;',
          '  nested: {',
          '    /** Documented. */',
          '    a: 1;',
          '    b: 2;',
          '  };',
          '  move(): void;',
          '}',
          '/** A type literal. */',
          'export type Options =',
          '  | {',
          '      /** Documented. */',
          '      a?: number;',
          '      b?: string;',
          '    }',
          '  | { c: true };',
          '/** A class. */',
          'export declare class Thing extends Base {',
          '  #secret;',
          '  private hidden;',
          '  protected guarded(): void;',
          '  constructor();',
          '  open(): void;',
          '  shut(): void;',
          '  static make(): Thing;',
          '}',
          'interface Local { z: number }',
          '/** A private base: its members are read through the exported interface. */',
          'interface Hidden {',
          '  /** Documented. */',
          '  w: 1;',
          '  v: 2;',
          '}',
          '/** Extends a private base. */',
          'export interface Open extends Hidden { u: 3 }',
          '/** An error. */',
          'export declare class Oops extends Error {',
          "  readonly name = 'Oops';",
          '  readonly detail: string;',
          '}',
          'export { type Local as Renamed };',
        ].join('\n'),
      );
      const found = undocumentedExports([
        { name: 'base', dir: base, entries: [join(base, 'index.d.ts')] },
        { name: 'pkg', dir: pkg, entries: [join(pkg, 'index.d.ts')] },
      ]);
      expect(found.get('pkg')).toEqual([
        'Oops.detail',
        'Open.u',
        'Open.v',
        'Options.b',
        'Options.c',
        'Renamed',
        'Renamed.z',
        'Shape.move',
        'Shape.nested',
        'Shape.nested.b',
        'Shape.y',
        'Thing.make',
        'Thing.shut',
        'bare',
      ]);
      expect(found.get('base')).toEqual(['Base', 'Base.inherited']);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
