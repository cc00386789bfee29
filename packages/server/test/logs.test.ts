// What `ids-server` writes, read from the real process's stdout and stderr: JSON lines with time
// and level (--log-format json), a claim's loss and its recovery both logged, the access log, the
// drain's steps; and the text format, the default.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, type BinRun, call, pollUntil, runBin, scratch, startBin, takeClaim } from './helpers.js';

/** A loopback port nothing listens on just now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

// A test that fails half-way leaves no server behind.
const started: BinRun[] = [];
afterEach(() => {
  for (const run of started.splice(0)) if (run.child.exitCode === null) run.child.kill('SIGKILL');
});

/** Every line of a stream as JSON (a line that is not JSON fails the test). */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}

/** Resolves once `read()` holds a line matching `pattern` (the test's own time limit bounds it). */
async function line(read: () => string, pattern: RegExp): Promise<string> {
  for (;;) {
    const found = read()
      .split('\n')
      .find((l) => pattern.test(l));
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('--log-format json', () => {
  it('every line is JSON with time, level and msg; a claim lost and recovered, the access log and the drain are all logged', async () => {
    const dir = scratch();
    const t0 = Date.now();
    const run: BinRun = await startBin(
      { IDS_CLAIM_DIR: dir, IDS_MACHINE_ID_SOURCE: 'host-claim', IDS_ACCESS_LOG: '1', IDS_DRAIN_MS: '1' },
      ['--machines', '2', '--log-format', 'json'],
    );
    started.push(run);
    const [listening] = jsonLines(run.out());
    expect(Object.keys(listening ?? {}).slice(0, 3)).toEqual(['time', 'level', 'msg']);
    expect(listening).toMatchObject({ level: 'info', event: 'listening', url: run.url, machineIds: [0, 1] });

    expect((await call(run.url, 'GET', '/ids?count=2')).status).toBe(200);
    expect((await call(run.url, 'GET', '/nope')).status).toBe(404);
    await takeClaim(dir, 1);
    const lost = JSON.parse(await line(run.err, /"event":"claim-lost"/));
    expect(lost).toMatchObject({ level: 'warn', slot: 1, machineId: 1 });
    expect(lost.msg).toMatch(/the claim on machine ID 1 was lost/);
    const recovered = JSON.parse(await line(run.out, /"event":"claim-recovered"/));
    // 1 now looks held by this test process, 0 by the server's other slot: 2 is the lowest free.
    expect(recovered).toMatchObject({ level: 'info', slot: 1, machineId: 2, previousMachineId: 1 });
    expect(recovered.msg).toBe('slot 1: issuing again under machine ID 2 (the claim on 1 was lost)');

    expect(await run.stop('SIGTERM')).toBe(0);
    const out = jsonLines(run.out());
    const err = jsonLines(run.err());
    for (const entry of [...out, ...err]) {
      expect(['info', 'warn', 'error']).toContain(entry.level);
      const time = Date.parse(entry.time as string);
      expect(time).toBeGreaterThanOrEqual(t0 - 1000);
      expect(time).toBeLessThanOrEqual(Date.now());
      expect(typeof entry.msg).toBe('string');
    }
    const requests = out.filter((entry) => entry.event === 'request');
    expect(requests[0]).toMatchObject({
      method: 'GET',
      url: '/ids?count=2',
      route: '/ids',
      status: 200,
      remoteAddress: '127.0.0.1',
    });
    expect(requests[0]?.durationMs).toBeGreaterThan(0);
    expect(requests[1]).toMatchObject({ url: '/nope', route: 'unmatched', status: 404 });
    // Every line names what happened in `event`; each slot's line holds how its ID was chosen as
    // fields (the step, and the chain's trail as data), its message one sentence.
    for (const entry of [...out, ...err]) expect(typeof entry.event, JSON.stringify(entry)).toBe('string');
    const slots = out.filter((entry) => entry.event === 'machine-id');
    expect(slots.map((entry) => entry.slot)).toEqual([0, 1]);
    for (const entry of slots) expect(entry.msg).toMatch(/^slot \d: machine ID \d+[^\n]+$/);
    expect(out.slice(-4).map((entry) => entry.event)).toEqual([
      'shutting-down',
      'draining',
      'closing',
      'stopped',
    ]);
    expect(out.at(-4)).toMatchObject({ msg: 'SIGTERM: shutting down', signal: 'SIGTERM' });
    expect(out.at(-3)).toMatchObject({ drainMs: 1 });
    expect(out.at(-1)).toMatchObject({ clean: true });
  });

  it("the auto chain's trail is data on each slot's line, not lines in its message", async () => {
    const run = await startBin({ IDS_CLAIM_DIR: scratch(), IDS_DRAIN_MS: '1' }, ['--log-format', 'json']);
    started.push(run);
    const slot = JSON.parse(await line(run.out, /"event":"machine-id"/));
    expect(await run.stop('SIGTERM')).toBe(0);
    expect(slot.msg).not.toContain('\n');
    expect(slot.trail[0]).toEqual({ step: '--machine-id', outcome: 'skipped', detail: 'not given' });
    // The last step tried gave the ID (a host claim on a host without a private IPv4).
    expect(slot.trail.at(-1)).toMatchObject({ step: slot.step, outcome: 'used' });
    expect(slot.trail.at(-1).detail).toMatch(new RegExp(`machine ID ${slot.machineId}\\b`));
    expect(slot.msg).toBe(`slot 0: ${slot.trail.at(-1).detail}`);
  });

  it('a configuration refused is one JSON error line on stderr, exit 2', async () => {
    const result = await runBin({ PORT: 'eighty', IDS_LOG_FORMAT: 'json' });
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(jsonLines(result.err)).toEqual([
      expect.objectContaining({
        level: 'error',
        code: 'ERR_IDS_SERVER_CONFIG',
        msg: 'ERR_IDS_SERVER_CONFIG: PORT: expected a whole number, received "eighty"',
        event: 'not-started',
        exitCode: 2,
      }),
    ]);
  });
});

describe('--log-level', () => {
  it('warn leaves the info lines out and keeps the warnings; error keeps only errors', async () => {
    const dir = scratch();
    // No `listening` line to wait for at this level: the test picks the port and asks /health/live.
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, '--machines', '2', '--log-format', 'json', '--log-level', 'warn'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          PORT: String(port),
          IDS_CLAIM_DIR: dir,
          IDS_MACHINE_ID_SOURCE: 'host-claim',
          IDS_DRAIN_MS: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const url = `http://127.0.0.1:${port}`;
    const live = await pollUntil(
      () => call(url, 'GET', '/health/live').catch(() => undefined),
      (reply) => reply?.status === 200,
    );
    expect(live?.status).toBe(200);
    await takeClaim(dir, 1);
    const lost = JSON.parse(await line(() => err, /"event":"claim-lost"/));
    expect(lost.level).toBe('warn');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
    expect(out).toBe('');
    const quiet = await runBin({ PORT: 'eighty', IDS_LOG_LEVEL: 'error' });
    expect(quiet.code).toBe(2);
    expect(quiet.err).toMatch(/^ids-server: ERR_IDS_SERVER_CONFIG: PORT: expected a whole number/);
  });

  it('a level that is not info, warn or error is one line naming the flag or the variable, exit 2', async () => {
    const flag = await runBin({ PORT: '0' }, ['--log-level', 'debug']);
    expect([flag.code, flag.out]).toEqual([2, '']);
    expect(flag.err).toBe(
      'ids-server: ERR_IDS_SERVER_CONFIG: --log-level: expected info, warn or error, received "debug"\n',
    );
    const env = await runBin({ PORT: '0', IDS_LOG_LEVEL: 'WARN' });
    expect(env.code).toBe(2);
    expect(env.err).toMatch(/IDS_LOG_LEVEL: expected info, warn or error, received "WARN"/);
  });
});

describe('--log-format text (the default)', () => {
  it('the lines a person reads; the recovery has its line too, and the access log one per request', async () => {
    const dir = scratch();
    const run = await startBin({ IDS_CLAIM_DIR: dir, IDS_MACHINE_ID_SOURCE: 'host-claim' }, [
      '--machines',
      '2',
      '--access-log',
    ]);
    started.push(run);
    await line(run.out, /^ {2}slot 1: /);
    expect(run.out()).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+ with machine IDs 0, 1\n {2}slot 0: /);
    expect((await call(run.url, 'GET', '/id')).status).toBe(200);
    expect(await line(run.out, /^GET \/id 200 /)).toMatch(/^GET \/id 200 [0-9.]+ ms 127\.0\.0\.1$/);
    await takeClaim(dir, 1);
    expect(await line(run.err, /claim on machine ID 1 was lost/)).toMatch(/^ids-server: /);
    await line(run.out, /^slot 1: issuing again under machine ID 2 \(the claim on 1 was lost\)$/);
    expect(await run.stop('SIGTERM')).toBe(0);
  });

  it('an unknown format is exit 2 naming the flag or the variable', async () => {
    const flag = await runBin({ PORT: '0' }, ['--log-format', 'yaml']);
    expect(flag.code).toBe(2);
    expect(flag.err).toBe(
      'ids-server: ERR_IDS_SERVER_CONFIG: --log-format: expected text or json, received "yaml"\n',
    );
    const env = await runBin({ PORT: '0', IDS_LOG_FORMAT: 'JSON' });
    expect(env.code).toBe(2);
    expect(env.err).toMatch(/IDS_LOG_FORMAT: expected text or json, received "JSON"/);
    const access = await runBin({ PORT: '0', IDS_ACCESS_LOG: 'yes' });
    expect(access.code).toBe(2);
    expect(access.err).toMatch(/IDS_ACCESS_LOG: expected 1, true, 0 or false, received "yes"/);
  });
});
