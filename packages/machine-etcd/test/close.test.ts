// close() in a child process: the process exits by itself and the claim key is gone at once.
// (etcd3's own close() leaves keepalives and watchers running; a test runner's workers are
// killed at the end, so only a separate process shows whether anything was left running.)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { etcdForSuite, freshPrefix } from './helpers.js';

const fixture = join(__dirname, 'fixtures', 'claim-then-exit.mjs');

interface Run {
  held: { key: string; leaseId: string; ids: number };
  /** ms from the line printed to the exit; undefined if it had not exited after `waitMs`. */
  exitAfterMs: number | undefined;
  code: number | null;
  kill(): void;
}

function run(mode: 'close' | 'no-close', endpoints: string[], prefix: string, waitMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture, mode, endpoints.join(','), prefix], {
      cwd: join(__dirname, '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let printedAt = 0;
    let exitedAt: number | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!printedAt && out.includes('\n')) {
        printedAt = performance.now();
        setTimeout(() => {
          try {
            resolve({
              held: JSON.parse(out.split('\n')[0]!),
              exitAfterMs: exitedAt === undefined ? undefined : exitedAt - printedAt,
              code: child.exitCode,
              kill: () => child.kill('SIGKILL'),
            });
          } catch (error) {
            reject(error);
          }
        }, waitMs);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    child.on('exit', () => {
      exitedAt = performance.now();
    });
    // 'close', not 'exit', for the refusal: the claim line may still be in the pipe at 'exit'.
    child.on('close', (code) => {
      if (!printedAt) reject(new Error(`the child exited (${code}) before claiming: ${err}`));
    });
  });
}

describe('close() in a child process', () => {
  const suite = etcdForSuite();

  it('exits by itself, and the key is gone at once (revoked, not expired)', async () => {
    const prefix = freshPrefix('child-close');
    const result = await run('close', suite.server.endpoints, prefix, 3000);
    result.kill();
    expect(result.held.ids).toBe(10);
    expect(result.exitAfterMs, 'the process did not exit within 3 s of closing').toBeDefined();
    expect(result.code).toBe(0);
    expect(await suite.admin.get(result.held.key).string()).toBeNull();
    const lease = await suite.admin.leaseClient.leaseTimeToLive({ ID: result.held.leaseId, keys: false });
    expect(Number(lease.TTL)).toBe(-1);
    console.log(`child with close(): exited ${Math.round(result.exitAfterMs!)} ms after printing`);
  });

  it('without close(), the key outlives the process until the lease expires (what close() prevents)', async () => {
    const prefix = freshPrefix('child-no-close');
    const result = await run('no-close', suite.server.endpoints, prefix, 1000);
    result.kill();
    expect(await suite.admin.get(result.held.key).string()).not.toBeNull();
    const lease = await suite.admin.leaseClient.leaseTimeToLive({ ID: result.held.leaseId, keys: false });
    expect(Number(lease.TTL)).toBeGreaterThan(50);
    await suite.admin.leaseClient.leaseRevoke({ ID: result.held.leaseId });
  });
});
