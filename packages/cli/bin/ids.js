#!/usr/bin/env node
// The `ids` command: turns on the compile cache, then runs the built command line (dist/main.js).
// A committed file, not a build output: pnpm links a bin when the workspace is installed, before
// anything is built, and warns "Failed to create bin" for a target that does not exist yet.
import module from 'node:module';

// Node 22.1+ keeps the compiled code of the modules loaded after this call on disk, so the next
// run skips most of the compiling (Node 20 has no such cache: then this does nothing). main.js is
// loaded after it, not imported statically: a static import would be compiled before this line runs.
module.enableCompileCache?.();
const built = new URL('../dist/main.js', import.meta.url);
import(built.href).catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || error.url !== built.href) throw error;
  process.stderr.write(
    `ids: ${decodeURIComponent(built.pathname)} is missing: build it with pnpm --filter @ids/cli build\n`,
  );
  process.exit(1);
});
