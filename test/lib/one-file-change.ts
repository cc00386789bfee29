// For the tests that show an extension point is a one-file change: a copy of a package's src/
// with exactly one file edited, placed inside the package folder so that its imports resolve
// as the original's do. The copy is imported through vitest like any TypeScript module.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface ChangedCopy {
  /** The copy's src/index.ts, to import. */
  readonly index: string;
  /** The files of the copy whose text differs from the original's (relative to src/). */
  readonly changed: string[];
  /** Removes the copy. */
  remove(): void;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/**
 * Copies `packageDir`/src, applies `edit` to the text of `file` (relative to src/), and reports
 * which files differ. @throws Error when `edit` leaves the file as it was (a fixture that no
 * longer applies would otherwise pass vacuously).
 */
export function copyWithOneFileChanged(
  packageDir: string,
  file: string,
  edit: (text: string) => string,
): ChangedCopy {
  const src = join(packageDir, 'src');
  const copy = mkdtempSync(join(packageDir, '.one-file-'));
  const copiedSrc = join(copy, 'src');
  cpSync(src, copiedSrc, { recursive: true });
  const before = readFileSync(join(src, file), 'utf8');
  const after = edit(before);
  if (after === before) throw new Error(`the fixture's edit of ${file} changed nothing: update the fixture`);
  writeFileSync(join(copiedSrc, file), after);
  const changed = filesUnder(src).filter(
    (name) => readFileSync(join(src, name), 'utf8') !== readFileSync(join(copiedSrc, name), 'utf8'),
  );
  return {
    index: join(copiedSrc, 'index.ts'),
    changed,
    remove: () => rmSync(copy, { recursive: true, force: true }),
  };
}
