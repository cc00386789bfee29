// `npm run test:node24` sets IDS_EXPECT_NODE_MAJOR=24 and puts Node 24 first on PATH; this
// shows the suites really run there (and that a `node` a test starts is the same one), rather
// than on whatever Node launched npm.
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

const expected = process.env.IDS_EXPECT_NODE_MAJOR;

it.runIf(expected !== undefined)('runs on the Node major the run asked for', () => {
  expect(process.versions.node.split('.')[0]).toBe(expected);
  const onPath = spawnSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
  expect(onPath.stdout.trim().split('.')[0]).toBe(expected);
});
