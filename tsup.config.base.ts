import { defineConfig, type Options } from 'tsup';

/**
 * The one build configuration: every package publishes ESM and CJS with their own type
 * declarations (index.d.ts for import, index.d.cts for require), so both resolve under
 * node16 and bundler resolution. A package's tsup.config.ts names only its entries.
 */
export function packageConfig(entry: Options['entry'] = ['src/index.ts'], extra: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    // No source maps in what is published: they were 57-60% of the installed bytes, and a stack
    // needs none to be read: the build is not minified and keeps its names (keepNames), so
    // frames name the function and the dist file's lines read as the source's
    // (test/stack-traces.test.ts).
    sourcemap: false,
    target: 'node20',
    platform: 'node',
    splitting: false,
    treeshake: true,
    // Class names are API: `Sonyflake.name` and error names must read as written, not `_Sonyflake`.
    keepNames: true,
    ...extra,
  });
}
