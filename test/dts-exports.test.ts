import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { valueExportsOfDeclarations } from './lib/dts-exports.js';

it('lists the value exports of a declaration file, not its types', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ids-dts-'));
  try {
    const other = join(dir, 'other.d.ts');
    const main = join(dir, 'index.d.ts');
    writeFileSync(other, 'export declare function fromOther(): void;\nexport interface OtherType { a: 1 }\n');
    writeFileSync(
      main,
      [
        'declare const local = 1;',
        'declare class Thing {}',
        'interface Shape { x: number }',
        'type Alias = string;',
        'declare enum Colour { Red }',
        "export * from './other.js';",
        'export { local as renamed, Thing, type Shape, type Alias, Colour };',
      ].join('\n'),
    );
    expect(valueExportsOfDeclarations([main]).get(main)).toEqual(['Colour', 'Thing', 'fromOther', 'renamed']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
