// Runs the built packages (the CLI, the server) with a changed copy of the engine, for the tests
// that show a change to one engine file reaches them: the copy's source is bundled to JavaScript,
// and a module-resolution hook hands it to every `@ids/engine` import of the process, so each
// package's own dist (cli, server, sonyflake, snowflake) runs unchanged on the copy.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * Builds the engine copy whose src/index.ts is `copyIndex` into its dist/ and returns the node
 * arguments (`--import …`) that make a process load it for `@ids/engine` and its entries
 * `@ids/engine/flavour`, `@ids/engine/internal` and `@ids/engine/read`. @throws when the copy does not build.
 */
export async function engineSwapArgs(copyIndex: string): Promise<string[]> {
  const src = dirname(copyIndex);
  const dist = join(dirname(src), 'dist');
  // One build of the entries with shared chunks: they share one IdsError class, as the published
  // package's do.
  await build({
    entryPoints: {
      index: join(src, 'index.ts'),
      flavour: join(src, 'flavour.ts'),
      internal: join(src, 'internal.ts'),
      read: join(src, 'read.ts'),
    },
    outdir: dist,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  const swapped = {
    '@ids/engine': pathToFileURL(join(dist, 'index.js')).href,
    '@ids/engine/flavour': pathToFileURL(join(dist, 'flavour.js')).href,
    '@ids/engine/internal': pathToFileURL(join(dist, 'internal.js')).href,
    '@ids/engine/read': pathToFileURL(join(dist, 'read.js')).href,
  };
  const hooks = join(dist, 'hooks.mjs');
  writeFileSync(
    hooks,
    `const swapped = ${JSON.stringify(swapped)};
export async function resolve(specifier, context, next) {
  const url = swapped[specifier];
  return url ? { url, shortCircuit: true } : next(specifier, context);
}
`,
  );
  const register = join(dist, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return ['--import', pathToFileURL(register).href];
}
