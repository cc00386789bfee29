import { defineConfig } from 'vitest/config';

// The store tests start real PostgreSQL and Redis servers and spawn up to 50 processes at once;
// run the files one after another so that they do not squeeze each other on a 2-core machine.
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
