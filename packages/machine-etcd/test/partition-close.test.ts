// close() behind a partition, in a child process: etcd3 cannot cancel its watch stream (the
// cancel gets no reply), and that stream used to keep the process alive for 15 s and more.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startEtcd, TcpProxy } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { canStartEtcd, cleanupAfterEach, freshPrefix } from './helpers.js';

const fixture = join(__dirname, 'fixtures', 'close-behind-partition.mjs');

const cleanup = cleanupAfterEach();

describe.skipIf(!canStartEtcd)('close() behind a partition (blackhole)', () => {
  it('the process exits within 10 s of close(), bounded by gRPC keepalive pings (6 s) plus timeoutMs', async () => {
    const etcd = await startEtcd();
    cleanup.push(() => etcd.stop());
    const proxy = await TcpProxy.start(etcd.endpoints[0]!);
    cleanup.push(() => proxy.close());
    const child = spawn(process.execPath, [fixture, proxy.url, freshPrefix('partition-close')], {
      cwd: join(__dirname, '..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    cleanup.push(async () => void child.kill('SIGKILL'));
    let closeAt = 0;
    const exitedAfter = await new Promise<number>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        if (chunk.includes('claimed')) {
          proxy.setMode('blackhole');
          setTimeout(() => {
            closeAt = performance.now();
            child.stdin.write('close\n');
          }, 200);
        }
      });
      child.on('exit', () => resolve(performance.now() - closeAt));
      setTimeout(() => resolve(Number.POSITIVE_INFINITY), 40_000).unref();
    });
    console.log(`close() behind a blackhole: the process exited ${Math.round(exitedAfter)} ms after close()`);
    expect(exitedAfter).toBeLessThan(10_000);
  });
});
