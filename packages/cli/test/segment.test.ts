// `ids segment create-tag`: the one way a segment tag is created, on PGlite and a real Redis, and
// what it answers to a tag that exists, a missing --after and bad values.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasRedis, serverForSuite, startRedis } from '@ids/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_LINE, ids } from './helpers.js';

const lines = (text: string) => text.trimEnd().split('\n');
const generate = (store: string, tag: string, n: number) =>
  ids(['generate', '--scheme', 'segment', '--store', store, '--tag', tag, '-n', String(n)]);
const createTag = (store: string, tag: string, after: string) =>
  ids(['segment', 'create-tag', tag, '--store', store, '--after', after]);

describe('ids segment create-tag: bad command lines (exit 2, nothing opened)', () => {
  it.each([
    [['segment'], /expected create-tag, received nothing/],
    [['segment', 'drop-tag', 'x', '--after', '0'], /expected create-tag, received "drop-tag"/],
    [['segment', 'create-tag', '--after', '0'], /create-tag: expected one TAG, received none/],
    [['segment', 'create-tag', 'a', 'b', '--after', '0'], /expected one TAG, received "a" "b"/],
    [['segment', 'create-tag', 'orders'], /--after: expected the ID before the first.*, received nothing/],
    [
      ['segment', 'create-tag', 'orders', '--after=-1'],
      /--after: expected .* from 0 to 9223372036854775806 .*received "-1"/,
    ],
    [['segment', 'create-tag', 'orders', '--after', '1.5'], /received "1.5"/],
    [['segment', 'create-tag', 'orders', '--after', '1e3'], /received "1e3"/],
    [['segment', 'create-tag', 'orders', '--after', '9223372036854775807'], /received "9223372036854775807"/],
    [
      ['segment', 'create-tag', 'bad tag', '--after', '0'],
      /tag: expected 1 to 64 characters .*received "bad tag"/,
    ],
  ])('%j', async (args, message) => {
    const result = await ids(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(message);
  });
});

describe('ids segment create-tag on PGlite', () => {
  const data = mkdtempSync(join(tmpdir(), 'ids-cli-create-tag-'));
  afterAll(() => rmSync(data, { recursive: true, force: true }));
  const store = `pglite:${join(data, 'db')}`;

  it('a tag never created: generate fails with what to run, and serves nothing', async () => {
    const result = await generate(store, 'never', 3);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(ERROR_LINE);
    expect(result.stderr).toMatch(/ERR_IDS_SEGMENT_UNKNOWN_TAG: .*ids segment create-tag/);
  }, 120_000);

  it('created once; again at or below what it handed out is refused (exit 1); above it, raised', async () => {
    const created = await createTag(store, 'orders', '0');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toBe('tag orders in pglite: IDs continue above 0\n');
    expect(lines((await generate(store, 'orders', 3)).stdout)).toEqual(['1', '2', '3']);
    // The run took a segment of 1000 and ended: the store has handed out 1 to 1000.
    for (const after of ['0', '3', '1000']) {
      const again = await createTag(store, 'orders', after);
      expect(again.code, after).toBe(1);
      expect(again.stderr).toMatch(ERROR_LINE);
      expect(again.stderr).toMatch(
        new RegExp(
          `ERR_IDS_SEGMENT_TAG_EXISTS: .*handed out IDs up to 1000; expected after above 1000 .*received ${after}n`,
        ),
      );
    }
    expect(lines((await generate(store, 'orders', 1)).stdout)).toEqual(['1001']);
    expect((await createTag(store, 'orders', '5_000_000')).code).toBe(0);
    expect(lines((await generate(store, 'orders', 1)).stdout)).toEqual(['5000001']);
  }, 180_000);
});

describe.skipIf(!hasRedis() || process.env.REDIS_URL)(
  'ids segment create-tag on a Redis that forgets',
  () => {
    const redis = serverForSuite(() => startRedis({ allowExternal: false }));

    it('restarted empty, the tag is unknown (never 1 again) until the operator creates it above the last ID', async () => {
      expect((await createTag(redis.server.url, 'orders', '0')).code).toBe(0);
      const before = lines((await generate(redis.server.url, 'orders', 5)).stdout).map(BigInt);
      expect(before).toEqual([1n, 2n, 3n, 4n, 5n]);
      await redis.server.stop();
      await redis.server.start(); // no persistence: the key is gone
      const forgotten = await generate(redis.server.url, 'orders', 5);
      expect(forgotten.code).toBe(1);
      expect(forgotten.stdout).toBe('');
      expect(forgotten.stderr).toMatch(/ERR_IDS_SEGMENT_UNKNOWN_TAG: .*Redis lost its data/);
      // The operator creates it above the last ID issued; a second run of the same command is refused.
      expect((await createTag(redis.server.url, 'orders', '5')).code).toBe(0);
      const twice = await createTag(redis.server.url, 'orders', '5');
      expect(twice.code).toBe(1);
      expect(twice.stderr).toMatch(/ERR_IDS_SEGMENT_TAG_EXISTS/);
      expect(lines((await generate(redis.server.url, 'orders', 2)).stdout)).toEqual(['6', '7']);
    }, 60_000);
  },
);
