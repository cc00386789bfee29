// `npm run test:node24` sets IDS_EXPECT_NODE_MAJOR=24 and puts Node 24 first on PATH; this
// shows the suites really run there (vitest, a `node` a test starts, and pnpm, which ran the
// test script), rather than on whatever Node launched npm.
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

const expected = process.env.IDS_EXPECT_NODE_MAJOR;

it.runIf(expected !== undefined)('runs on the Node major the run asked for', () => {
  expect(process.versions.node.split('.')[0]).toBe(expected);
  const onPath = spawnSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
  expect(onPath.stdout.trim().split('.')[0]).toBe(expected);
  // pnpm names itself and the Node it runs on to the scripts it starts: pnpm 10 ran on it too.
  expect(process.env.npm_config_user_agent).toMatch(new RegExp(`^pnpm/10\\.\\S+ .*node/v${expected}\\.`));
});
