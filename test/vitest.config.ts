import { defineConfig } from 'vitest/config';

// Integration tests start processes and services; give them room, and never run the benchmarks.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['bench/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The misuse guard is off for tests that build several generators per ID (see the engine's).
    env: { IDS_SAME_MACHINE_ID: 'allow' },
  },
});
