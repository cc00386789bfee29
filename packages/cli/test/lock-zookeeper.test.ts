// `ids lock --store zookeeper://host:port` on a real ZooKeeper: the store table's ZooKeeper entry
// reaches @ids/lock's zookeeperLocks, whose locks the library sees (one held by the library
// makes `ids lock --nonblock` exit 1), and fences increase from one run to the next.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { zookeeperLocks } from '@ids/lock/zookeeper';
import { hasZookeeper, serverForSuite, startZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { expectNonblockRefused, ids, tempDir } from './helpers.js';

describe.skipIf(!hasZookeeper())('ids lock on ZooKeeper', () => {
  const zk = serverForSuite(startZookeeper);
  const dir = tempDir('lock-zookeeper');
  const store = () => `zookeeper://${zk.server.connect}`;

  const lockRun = (file: string, extra: string[] = []) =>
    ids([
      'lock',
      '--store',
      store(),
      ...extra,
      'orders:7',
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(file)}, process.env.IDS_LOCK_FENCE)`,
    ]);

  it('runs the command under the lock; fences increase', { timeout: 120_000 }, async () => {
    const first = join(dir, 'first');
    const second = join(dir, 'second');
    const a = await lockRun(first);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect((await lockRun(second)).code).toBe(0);
    expect(BigInt(readFileSync(second, 'utf8'))).toBeGreaterThan(BigInt(readFileSync(first, 'utf8')));
  });

  it('a lock the library holds on the same ZooKeeper makes --nonblock exit 1', {
    timeout: 120_000,
  }, async () => {
    const locks = await zookeeperLocks({ connect: zk.server.connect });
    await expectNonblockRefused(locks, 'orders:7', () => lockRun(join(dir, 'never'), ['--nonblock']));
  });
});
