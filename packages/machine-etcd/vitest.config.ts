import { defineConfig } from 'vitest/config';

// The etcd tests start real etcd servers (clusters of three, stopped and restarted mid-run) and
// wait out lease TTLs of a second or two; give them room and run the files one after another,
// so that their timing is not squeezed by each other on a 2-core machine.
export default defineConfig({
  test: {
    // A ceiling, not a wait: the multi-process tests took 33 s each under 4 busy loops (load 36).
    testTimeout: 180_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    // The misuse guard is off for tests that build several generators per ID (see the engine's).
    env: { IDS_SAME_MACHINE_ID: 'allow' },
  },
});
