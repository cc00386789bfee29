import { defineConfig } from 'vitest/config';

// Tests build many generators with one layout and machine ID, each for its own case, without
// closing every one: the misuse guard is off for them (IDS_SAME_MACHINE_ID), and its own tests
// turn it on with `sameMachineId: 'refuse'`.
//
// vitest's default 5 s per test is a deadline for an idle machine: volume and concurrency tests
// that take 1 s alone took 5-12 s beside a loaded suite. The bound here only ends a hang.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    env: { IDS_SAME_MACHINE_ID: 'allow' },
  },
});
