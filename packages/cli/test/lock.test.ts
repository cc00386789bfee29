// `ids lock`: a command run under a named lock on a real Redis, with the fence in its environment.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { redisLocks } from '@ids/lock/redis';
import { serverForSuite, startRedis } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { expectNonblockRefused, ids, tempDir } from './helpers.js';

describe('ids lock', () => {
  const redis = serverForSuite(() => startRedis({ allowExternal: false }));
  const dir = tempDir('lock');

  /** `ids lock` running node, which writes its IDS_LOCK_FENCE to `file` and exits with `code`. */
  const lockRun = (file: string, code = 0, extra: string[] = []) =>
    ids([
      'lock',
      '--store',
      redis.server.url,
      // A short TTL: the first lock on a new Redis is held one TTL before use (it cannot tell
      // a new Redis from one that forgot its holders).
      '--ttl',
      '1000',
      ...extra,
      'orders:42',
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(file)}, process.env.IDS_LOCK_NAME + ' ' + process.env.IDS_LOCK_FENCE); process.exit(${code})`,
    ]);

  it('runs the command with the fence in its environment; fences increase; the exit code is the command’s', async () => {
    const first = join(dir, 'first');
    const second = join(dir, 'second');
    expect((await lockRun(first)).code).toBe(0);
    expect((await lockRun(second, 3)).code).toBe(3);
    const [name, a] = readFileSync(first, 'utf8').split(' ');
    const [, b] = readFileSync(second, 'utf8').split(' ');
    expect(name).toBe('orders:42');
    expect(BigInt(b as string)).toBeGreaterThan(BigInt(a as string));
  });

  it('--nonblock exits 1 at once while another holds the lock', async () => {
    const locks = await redisLocks({ url: redis.server.url });
    await expectNonblockRefused(locks, 'orders:42', () => lockRun(join(dir, 'never'), 0, ['--nonblock']));
  });

  it.each([
    [['lock'], /expected a lock name and a command/],
    [['lock', 'n', '--store', 'ftp://x', '--', 'true'], /--store: expected redis:\/\/.*received "ftp:\/\/x"/],
    [['lock', 'n', '--ttl', '5', '--', 'true'], /--ttl/],
  ])('%j exits 2', async (args, message) => {
    const result = await ids(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});
