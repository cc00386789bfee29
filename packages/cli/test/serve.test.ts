// `ids serve`, run as a user runs it: the ID service of @ids/server until SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const bin = join(__dirname, '..', 'bin', 'ids.js');

describe('ids serve', () => {
  it('serves IDs on a free loopback port with --machines 2, and exits 0 on SIGTERM after the default drain', async () => {
    const dir = tempDir('serve');
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--machines', '2'], {
      env: { PATH: process.env.PATH ?? '', IDS_CLAIM_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+) with machine IDs 0, 1/.exec(out);
        if (match) resolve(match[1] as string);
      });
      child.on('exit', (code) => reject(new Error(`exited with ${code}: ${out}`)));
    });
    const layout = (await (await fetch(`${url}/layout`)).json()) as { service: unknown };
    expect(layout.service).toEqual({ machines: 2, idsPerSecond: 51_200, maxCount: 1000 });
    const { ids } = (await (await fetch(`${url}/ids?count=3`)).json()) as { ids: string[] };
    expect(ids).toHaveLength(3);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(out).toMatch(
      /draining for 5000 ms: readiness answers 503, requests are still served\n(.*\n)*stopped\n$/,
    );
    // The drain takes its 5 s on top of the start.
  }, 60_000);

  it('refuses a non-loopback --host without a token (exit 2), before listening', () => {
    const result = spawnSync(process.execPath, [bin, 'serve', '--host', '0.0.0.0', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', IDS_MACHINE_ID: '1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /^ids serve: ERR_IDS_SERVER_CONFIG: host "0\.0\.0\.0" is not a loopback address/,
    );
    expect(result.stdout).toBe('');
  });
});
