import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accepts, hasRedis, type RedisServer, serverForSuite, startRedis, tempDirs } from '../src/index.js';

describe.skipIf(!hasRedis())('serverForSuite', () => {
  const events: string[] = [];
  let port = 0;

  describe('a block with a Redis and an admin client on it', () => {
    const suite = serverForSuite(() => startRedis({ allowExternal: false }), {
      connect: (redis: RedisServer) => {
        events.push(`connect ${redis.port}`);
        return { port: redis.port };
      },
      stop: async (redis, admin) => {
        events.push(`stop admin of ${admin?.port}`);
        await redis.close();
        events.push('closed');
      },
    });

    it('has the server running and the client made before its first test', async () => {
      port = suite.server.port;
      expect(events).toEqual([`connect ${port}`]);
      expect(suite.admin).toEqual({ port });
      expect(await accepts(port, 10_000)).toBe(true);
    });

    it('keeps them for its later tests', () => {
      expect(suite.server.port).toBe(port);
      expect(events).toEqual([`connect ${port}`]);
    });
  });

  it('ended them after the block, the client first', async () => {
    expect(events).toEqual([`connect ${port}`, `stop admin of ${port}`, 'closed']);
    expect(await accepts(port, 10_000)).toBe(false);
  });

  let plainPort = 0;
  describe('a block with a Redis alone', () => {
    const suite = serverForSuite(() => startRedis({ allowExternal: false }));

    it('has it running', async () => {
      plainPort = suite.server.port;
      expect(suite.admin).toBeUndefined();
      expect(await accepts(plainPort, 10_000)).toBe(true);
    });
  });

  it('closed it with its own close() after the block', async () => {
    expect(plainPort).not.toBe(0);
    expect(await accepts(plainPort, 10_000)).toBe(false);
  });
});

describe('tempDirs', () => {
  const dirs: string[] = [];
  describe('a block that makes directories', () => {
    const tempDir = tempDirs('ids-suite-test-');

    it('makes a new directory on each call, under the prefix', () => {
      dirs.push(tempDir(), tempDir());
      expect(dirs[0]).not.toBe(dirs[1]);
      for (const dir of dirs) {
        expect(dir).toMatch(/ids-suite-test-\w+$/);
        writeFileSync(join(dir, 'left-behind'), 'x');
      }
    });

    it('keeps them for the later tests of the block', () => {
      expect(dirs.map(existsSync)).toEqual([true, true]);
    });
  });

  it('deleted them, and what was in them, after the block', () => {
    expect(dirs).toHaveLength(2);
    expect(dirs.map(existsSync)).toEqual([false, false]);
  });
});
