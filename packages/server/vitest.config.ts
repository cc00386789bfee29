import { defineConfig } from 'vitest/config';

// The tests start the bin as a user would, a real Redis, and load it with concurrent requests;
// run the files one after another so that their timing is not squeezed on a 2-core machine.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    // A ceiling, not a wait: starting the bin on PGlite took over 60 s under 4 busy loops (load 25).
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
