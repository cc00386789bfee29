import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type RedisServer, serverForSuite, startRedis } from '@ids/test-services';
import { Redis } from 'ioredis';

export { FakeScheduler } from '../../machine-lease/test/fake-scheduler.js';
export * from '../../machine-lease/test/kit.js';

/** startRedis() for the tests of the enclosing describe, with an admin client on it. */
export function redisForSuite(): { readonly server: RedisServer; readonly admin: Redis } {
  return serverForSuite(() => startRedis({ allowExternal: false }), {
    connect: (redis) => new Redis(redis.url, { maxRetriesPerRequest: 1 }),
    stop: async (redis, admin) => {
      admin?.disconnect();
      await redis.close();
    },
  });
}

/** A fixture process of test/fixtures, with its output lines as events. */
export interface Child {
  readonly child: ChildProcess;
  /** Resolves on the first line equal to `line` (or matching it); rejects if the process exits first. */
  line(match: string | RegExp): Promise<string>;
  /** Every line printed so far. */
  readonly lines: string[];
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Starts `test/fixtures/<name>` with `args`. */
export function fixture(name: string, args: string[]): Child {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', name), ...args], {
    cwd: join(__dirname, '..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffer = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let at = buffer.indexOf('\n');
    while (at >= 0) {
      lines.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
      at = buffer.indexOf('\n');
    }
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  // 'close', not 'exit': 'exit' can come before the last lines of stdout are read, and `line`
  // must not report a line missing that is still in the pipe.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    line(match) {
      const test = (l: string) => (typeof match === 'string' ? l === match : match.test(l));
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(test);
          if (found !== undefined) {
            listeners.delete(check);
            resolve(found);
          }
        };
        listeners.add(check);
        check();
        void exited.then((code) => {
          if (listeners.has(check))
            reject(new Error(`${name} exited (${code}) before printing ${match}: ${err}`));
        });
      });
    },
  };
}
