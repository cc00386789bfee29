// The code examples of the READMEs are run, so they cannot rot. Read: README.md at the root and
// in every folder under packages/ and examples/. Run: every fenced block whose language is ts,
// typescript, js, javascript or mjs, unless its info string also says `no-run`
// (```ts no-run), which is for fragments that cannot stand alone, or `etcd` (```js etcd), which
// marks an example that needs an etcd server: @ids/machine-etcd's own README test runs those
// against the real etcd it starts. Each block is a whole ES
// module. TypeScript blocks are typechecked (strict, against the built packages' declarations);
// every block is then run with `node` in a scratch folder where each workspace package (@ids/*, examples included) resolves
// to its folder in this workspace, as if installed. A block must exit 0 by itself, within 20 s.
// Shell blocks (sh, console) are run by readme-shell.test.ts, as a user types them.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { type Block, fencedBlocks, readmeBlocks, readmes } from './lib/readme-blocks.js';
import { describeRun, root, run, workspacePackages } from './lib/workspace.js';

const RUNNABLE = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const runs = (block: Block) =>
  RUNNABLE.has(block.lang) && !block.words.includes('no-run') && !block.words.includes('etcd');

const runnable = readmeBlocks.filter(runs);
const isTs = (block: Block) => block.lang === 'ts' || block.lang === 'typescript';

const scratch = tempDir('readme');

// The examples run without the caller's machine-ID setting, as on a fresh machine, and any host
// claims they take go to a scratch directory, not the user's own.
const exampleEnv: NodeJS.ProcessEnv = { ...process.env, IDS_CLAIM_DIR: join(scratch, 'claims') };
delete exampleEnv.IDS_MACHINE_ID;
// The misuse guard at its default (this suite turns it off for its own many generators).
delete exampleEnv.IDS_SAME_MACHINE_ID;
const fileOf = new Map<Block, string>();
let diagnostics = new Map<string, string[]>();

beforeAll(() => {
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }),
  );
  // Each workspace package where an installed one would be; Node resolves the link to the real
  // folder, so the package's own dependencies come from the workspace too.
  for (const pkg of [...workspacePackages('packages'), ...workspacePackages('examples')]) {
    const link = join(scratch, 'node_modules', ...pkg.name.split('/'));
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(pkg.dir, link, 'dir');
  }
  runnable.forEach((block, i) => {
    const base = join(scratch, `block-${i}-${block.readme.replace(/[^a-z0-9]+/gi, '_')}-L${block.line}`);
    const source = `${base}.${isTs(block) ? 'mts' : 'mjs'}`;
    writeFileSync(source, block.code);
    fileOf.set(block, source);
  });
  diagnostics = typecheck(runnable.filter(isTs).map((block) => fileOf.get(block)!));
  for (const block of runnable.filter(isTs)) {
    const source = fileOf.get(block)!;
    const js = ts.transpileModule(block.code, {
      fileName: source,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    }).outputText;
    const out = source.replace(/\.mts$/, '.mjs');
    writeFileSync(out, js);
    fileOf.set(block, out);
  }
});

/** Strict TypeScript over all blocks at once (one program is much faster than one per block). */
function typecheck(files: string[]): Map<string, string[]> {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [join(root, 'node_modules', '@types')],
  });
  const byFile = new Map<string, string[]>();
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? '(program)';
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? `line ${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}: `
        : '';
    byFile.set(file, [
      ...(byFile.get(file) ?? []),
      `${where}${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
    ]);
  }
  return byFile;
}

it('finds the README examples to run, the root README and the package READMEs among them', () => {
  expect(readmes).toContain(join(root, 'README.md'));
  expect(runnable.some((block) => block.readme === 'README.md')).toBe(true);
  expect(runnable.some((block) => block.readme.startsWith('packages/'))).toBe(true);
});

it('reads fences, languages and the no-run marker', () => {
  const found = fencedBlocks(
    'x.md',
    [
      '```sh',
      'npm test',
      '```',
      '```ts no-run',
      'partial(',
      '```',
      '````js',
      'const a = 1;',
      '```',
      '````',
      '```js etcd',
      'await claim();',
      '```',
    ].join('\n'),
  );
  expect(found.map((block) => ({ lang: block.lang, run: runs(block), line: block.line }))).toEqual([
    { lang: 'sh', run: false, line: 1 },
    { lang: 'ts', run: false, line: 4 },
    { lang: 'js', run: true, line: 7 },
    { lang: 'js', run: false, line: 11 },
  ]);
  expect(found[2]!.code).toBe('const a = 1;\n```\n');
});

it('a broken example would fail: the typecheck sees a wrong call', () => {
  const file = join(scratch, 'control.mts');
  writeFileSync(file, "import { Sonyflake } from '@ids/sonyflake';\nnew Sonyflake({ machineID: 1 });\n");
  expect((typecheck([file]).get(file) ?? []).join('\n')).toMatch(/machineID/);
});

describe.each(runnable.map((block) => [`${block.readme}:${block.line} (${block.lang})`, block] as const))(
  '%s',
  (_name, block) => {
    it.runIf(isTs(block))('typechecks', () => {
      const source = fileOf.get(block)!.replace(/\.mjs$/, '.mts');
      expect(diagnostics.get(source) ?? [], block.code).toEqual([]);
    });

    it('runs to completion', async () => {
      const result = await run(process.execPath, [fileOf.get(block)!], {
        cwd: scratch,
        timeoutMs: 20_000,
        env: exampleEnv,
      });
      expect(result.status, describeRun(`${block.readme}:${block.line}`, result)).toBe(0);
    });
  },
);
