// Builds the page: the script bundled for browsers (the engine included; it does no I/O), the
// CSS minified, both inlined into the HTML template, so the page is one file that needs nothing
// else: it opens from disk, from any server, or offline. Runs at build time only (tsup.config.ts
// and the tests); esbuild never reaches the published package.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build, type Plugin, transform } from 'esbuild';

/** The built page and its parts, for the build and for the tests that measure them. */
export interface BuiltPage {
  /** The whole page. */
  readonly html: string;
  /** The module script inlined in it. */
  readonly script: string;
  /** The CSS inlined in it. */
  readonly css: string;
}

/** Which browsers the script must run on: ones that ship bigint, `??` and `structuredClone`. */
const TARGETS = ['chrome100', 'firefox100', 'safari15.4'];

/**
 * Bundles the engine from its TypeScript sources rather than its built dist/index.js. The dist
 * file is one module, and esbuild keeps its top-level statements with effects, among them
 * clock.ts's `new Int32Array(new SharedArrayBuffer(4))` (for sleepSync) and the wall clock it
 * creates at load: `SharedArrayBuffer` is undefined in a page that is not cross-origin isolated,
 * so the page would fail as it loads. From the sources, the engine's `sideEffects: false` lets
 * esbuild drop every module the page does not import (clock, generator, shared state).
 */
function engineFromSource(engineDir: string): Plugin {
  return {
    name: 'engine-from-source',
    setup(b) {
      // The main entry and the reading entry, from one source tree: one copy of each class.
      b.onResolve({ filter: /^@ids\/engine(\/read)?$/ }, (args) => ({
        path: join(engineDir, 'src', args.path === '@ids/engine/read' ? 'read.ts' : 'index.ts'),
      }));
    },
  };
}

/** Where the workspace's @ids/engine is, seen from `packageDir`. */
function engineOf(packageDir: string): string {
  return dirname(createRequire(join(packageDir, 'package.json')).resolve('@ids/engine/package.json'));
}

/**
 * Builds the page from `packageDir`/src/page, with the engine of `engineDir`/src (by default the
 * workspace's; the one-file-change test passes a changed copy). @throws when the script or CSS
 * does not build.
 */
export async function buildPage(packageDir: string, engineDir = engineOf(packageDir)): Promise<BuiltPage> {
  const pageDir = join(packageDir, 'src', 'page');
  const bundle = await build({
    entryPoints: [join(pageDir, 'main.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: TARGETS,
    minify: true,
    legalComments: 'none',
    // platform 'browser': a Node builtin reaching the bundle fails the build here, not the page.
    logLevel: 'silent',
    plugins: [engineFromSource(engineDir)],
  });
  const script = bundle.outputFiles[0]!.text.trim();
  const css = (
    await transform(readFileSync(join(pageDir, 'style.css'), 'utf8'), {
      loader: 'css',
      minify: true,
      target: TARGETS,
    })
  ).code.trim();
  // Inlined text must not close its own element early.
  if (/<\/script/i.test(script)) throw new Error('the page script contains "</script"');
  if (/<\/style/i.test(css)) throw new Error('the page CSS contains "</style"');
  const template = readFileSync(join(pageDir, 'index.html'), 'utf8');
  const html = template
    .replace('/*STYLE*/', () => css)
    .replace('<!--SCRIPT-->', () => `<script type="module">${script}</script>`);
  return { html, script, css };
}
