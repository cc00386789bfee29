import { defineConfig } from 'vitest/config';

// Tests build many generators with one layout and machine ID, each for its own case, without
// closing every one: the misuse guard is off for them (IDS_SAME_MACHINE_ID), and its own tests
// turn it on with `sameMachineId: 'refuse'`.
export default defineConfig({
  test: {
    env: { IDS_SAME_MACHINE_ID: 'allow' },
  },
});
