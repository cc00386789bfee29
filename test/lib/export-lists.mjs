// The names every workspace package exports, entry by entry, read with the TypeScript checker
// from the built `.d.ts` files (so `export *`, re-exports and `export { type X }` all count).
// test/export-lists.test.ts compares them with the committed lists in test/exports/, so the
// public surface changes only on purpose. After changing it on purpose, rebuild and rewrite the
// lists with one command: `npm run exports:update` (CONTRIBUTING.md).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the committed lists live, one file per package. */
export const LISTS_DIR = join(root, 'test', 'exports');

/** The workspace's package folders, as pnpm-workspace.yaml lists them (a `dir/*` or a `dir`). */
function workspaceFolders() {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const globs = [...yaml.matchAll(/^ {2}- (\S+)$/gm)].map((match) => match[1] ?? '');
  return globs.flatMap((glob) => {
    if (!glob.endsWith('/*')) return [join(root, glob)];
    const base = join(root, glob.slice(0, -2));
    return existsSync(base) ? readdirSync(base).map((folder) => join(base, folder)) : [];
  });
}

/**
 * Each workspace package with an `exports` map, and the declaration file of each entry (the
 * `types` of its `import` condition, or of the entry itself).
 * @returns {{ name: string, file: string, entries: { specifier: string, dts: string }[] }[]}
 */
export function packageEntries() {
  const packages = [];
  for (const dir of workspaceFolders()) {
    const manifestPath = join(dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const entries = [];
    for (const [key, target] of Object.entries(manifest.exports ?? {})) {
      const types =
        typeof target === 'object' && target !== null ? (target.import?.types ?? target.types) : undefined;
      if (typeof types !== 'string') continue;
      entries.push({
        specifier: key === '.' ? manifest.name : `${manifest.name}${key.slice(1)}`,
        dts: join(dir, types),
      });
    }
    if (entries.length > 0)
      packages.push({ name: manifest.name, file: `${manifest.name.split('/').at(-1)}.txt`, entries });
  }
  return packages.sort((a, b) => a.file.localeCompare(b.file));
}

/**
 * The list text of every package: a line per exported name, `<entry> <name> <value|type>`,
 * sorted by entry then name. A name that is both (a class) counts as a value.
 * @returns {Map<string, string>} list file name -> its text
 */
export function exportLists() {
  const packages = packageEntries();
  const files = packages.flatMap((pkg) => pkg.entries.map((entry) => entry.dts));
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`not built (run npm run build first): ${missing.join(', ')}`);
  }
  const program = ts.createProgram(files, {
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const lists = new Map();
  for (const pkg of packages) {
    const lines = [`# ${pkg.name}: exported names (regenerate with npm run exports:update)`];
    for (const entry of pkg.entries) {
      const source = program.getSourceFile(entry.dts);
      const symbol = source && checker.getSymbolAtLocation(source);
      const names = symbol
        ? checker.getExportsOfModule(symbol).map((exported) => {
            const target =
              exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
            return `${entry.specifier} ${exported.getName()} ${target.flags & ts.SymbolFlags.Value ? 'value' : 'type'}`;
          })
        : [];
      lines.push(...names.sort());
    }
    lists.set(pkg.file, `${lines.join('\n')}\n`);
  }
  return lists;
}

/** How many names a list text holds, by entry. @param {string} text */
export function countNames(text) {
  const counts = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const entry = line.split(' ')[0];
    counts.set(entry, (counts.get(entry) ?? 0) + 1);
  }
  return counts;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lists = exportLists();
  if (process.argv.includes('--write')) {
    mkdirSync(LISTS_DIR, { recursive: true });
    for (const [file, text] of lists) writeFileSync(join(LISTS_DIR, file), text);
  }
  for (const [file, text] of lists) {
    const counts = [...countNames(text)].map(([entry, n]) => `${entry} ${n}`).join(', ');
    console.log(`${file}: ${counts}`);
  }
}
