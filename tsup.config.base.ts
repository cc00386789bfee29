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
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
    treeshake: true,
    // Class names are API: `Sonyflake.name` and error names must read as written, not `_Sonyflake`.
    keepNames: true,
    ...extra,
  });
}
