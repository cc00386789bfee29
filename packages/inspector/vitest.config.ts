import { defineConfig } from 'vitest/config';

// The browser tests launch a real Chromium, which takes seconds on a loaded 2-core machine.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
