import { defineConfig } from 'vitest/config';

// The Redis tests start real redis-server processes (killed, restarted and paused mid-run) and
// wait out lease TTLs of a second or two; run the files one after another so that their timing
// is not squeezed by each other on a 2-core machine.
export default defineConfig({
  test: {
    // A ceiling, not a wait: the multi-process tests took 33 s each under 4 busy loops (load 36).
    testTimeout: 180_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
