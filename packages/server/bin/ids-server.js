#!/usr/bin/env node
// The `ids-server` command. A committed file, not the build's dist/bin.js: pnpm links a bin when
// the workspace is installed, before anything is built, and warned "Failed to create bin" for a
// target that did not exist yet. This runs the built server, or says how to build it.
const built = new URL('../dist/bin.js', import.meta.url);
import(built.href).catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || error.url !== built.href) throw error;
  process.stderr.write(
    `ids-server: ${decodeURIComponent(built.pathname)} is missing: build it with pnpm --filter @ids/server build\n`,
  );
  process.exit(1);
});
