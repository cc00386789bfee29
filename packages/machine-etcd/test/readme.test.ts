// The README's example (fenced ```js etcd, which the repository-wide README runner leaves to this
// test), run as written against a real etcd (through ETCD_ENDPOINTS, which the example reads by
// default).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverForSuite } from '@ids/test-services';
import { expect, it } from 'vitest';
import { adminClient, singleEtcd } from './helpers.js';

const etcd = serverForSuite(singleEtcd, { stop: (cluster) => cluster.stop() });

it('the README example claims an ID, issues an ID under it, and frees it on close', async () => {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const code = /```js etcd\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(code).toContain("from '@ids/machine-etcd'");
  // Beside the tests, so that the package and its dev dependencies resolve as for a user.
  const file = join(__dirname, `.readme-example-${process.pid}.mjs`);
  writeFileSync(file, code!);
  try {
    const run = spawnSync(process.execPath, [file], {
      env: { ...process.env, ETCD_ENDPOINTS: etcd.server.endpoints.join(',') },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^machine \d+: \d{15,}\n$/);
  } finally {
    rmSync(file, { force: true });
  }
  const admin = adminClient(etcd.server.endpoints);
  try {
    const claims = (await admin.getAll().prefix('/ids/machine-id/').keys()).filter(
      (k) => !k.includes('/time/'),
    );
    expect(claims).toEqual([]);
  } finally {
    admin.close();
  }
});
