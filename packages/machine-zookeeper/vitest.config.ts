import { defineConfig } from 'vitest/config';

// The tests start real ZooKeeper servers (JVMs) and many client processes; run the files one
// after another so that they do not squeeze each other's timing on a 2-core machine.
export default defineConfig({
  test: {
    // A ceiling, not a wait.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    env: { IDS_SAME_MACHINE_ID: 'allow' },
  },
});
