import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, SONYFLAKE_LAYOUT, toTime } from '@ids/sonyflake';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startExample } from '../server.mjs';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of several shapes, checked field by field
  json: any;
}

function call(base: string, method: string, path: string, agent: Agent | false = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    httpRequest(`${base}${path}`, { method, agent, path }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: text ? JSON.parse(text) : undefined,
        }),
      );
    })
      .on('error', reject)
      .end();
  });
}

function expectError(reply: Reply, status: number, code: string) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.json.error.code).toBe(code);
}

describe('the example server', { timeout: 60_000 }, () => {
  let server: Awaited<ReturnType<typeof startExample>>;
  const get = (path: string) => call(server.url, 'GET', path);
  beforeAll(async () => {
    server = await startExample({ machineId: 7 });
  });
  afterAll(async () => {
    await server.shutdown();
  });

  it('listens on a free port on loopback', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('GET /id, /ids?count=N and /ids/{id}: IDs as strings under machine ID 7, and their fields', async () => {
    const one = await get('/id');
    expect(one.status).toBe(200);
    expect(one.headers['cache-control']).toBe('no-store');
    expect(Number(BigInt(one.json.id) & 0xffffn)).toBe(7);
    const many = (await get('/ids?count=1000')).json.ids.map(BigInt);
    expect(many).toHaveLength(1000);
    for (let i = 1; i < many.length; i++) expect(many[i] > many[i - 1]).toBe(true);
    const parts = (await get(`/ids/${one.json.id}`)).json;
    expect(parts).toMatchObject({ id: one.json.id, machine: 7, layout: 'sonyflake' });
    expect((await get('/health/live')).json).toEqual({ status: 'live' });
  });

  it('bad input is a JSON error with a stable code', async () => {
    expectError(await get('/ids?count=1001'), 400, 'ERR_INVALID_COUNT');
    expectError(await get('/ids/abc'), 400, 'ERR_IDS_INVALID_ID');
    expectError(await get('/nope'), 404, 'ERR_NOT_FOUND');
    expectError(await call(server.url, 'POST', '/id'), 405, 'ERR_METHOD_NOT_ALLOWED');
  });

  it('issues unique IDs across concurrent requests', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(i % 2 ? '/id' : '/ids?count=50')),
    );
    const ids = replies.flatMap((reply) => reply.json.ids ?? [reply.json.id]);
    expect(new Set(ids).size).toBe(20 * 50 + 20);
  });
});

describe('under load', { timeout: 60_000 }, () => {
  it('128 concurrent clients asking for 250 IDs, 1 ID, 250 IDs (32,000 IDs in flight, over a second of the ceiling): every answer 200, no ID dated after the moment it arrived, no duplicate', async () => {
    const server = await startExample({ machineId: 8 });
    const agent = new Agent({ keepAlive: true, maxSockets: 128 });
    try {
      const statuses = new Map<number, number>();
      const ids: string[] = [];
      let ahead = 0;
      await Promise.all(
        Array.from({ length: 128 }, async () => {
          for (const path of ['/ids?count=250', '/id', '/ids?count=250']) {
            const reply = await call(server.url, 'GET', path, agent);
            // Date.now() is truncated to the ms: allow that one ms.
            const arrived = Date.now() + 1;
            statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
            if (reply.status !== 200) continue;
            for (const id of reply.json.ids ?? [reply.json.id]) {
              ids.push(id);
              if (toTime(id).getTime() > arrived) ahead++;
            }
          }
        }),
      );
      expect(Object.fromEntries(statuses)).toEqual({ 200: 128 * 3 });
      expect(ahead).toBe(0);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      agent.destroy();
      await server.shutdown();
    }
  }, 30_000);
});

describe('when the generator cannot issue IDs', { timeout: 60_000 }, () => {
  it('answers 503 while the clock is stepped back past the bound, then recovers', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const server = await startExample({ machineId: 3, clock, maxClockBackwardMs: 0 });
    try {
      expect((await call(server.url, 'GET', '/id')).status).toBe(200);
      clock.advance(-2000);
      const refused = await call(server.url, 'GET', '/ids?count=300');
      expectError(refused, 503, 'ERR_IDS_CLOCK_BACKWARDS');
      expect(refused.headers['retry-after']).toBe('1');
      clock.advance(2010);
      expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    } finally {
      await server.shutdown();
    }
  });
});

describe('machine ID and shutdown', { timeout: 60_000 }, () => {
  it('without an explicit ID, takes a host claim, and shutdown releases it after the request in flight', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-id-server-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startExample({ env: { IDS_CLAIM_DIR: dir } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    // Shut down once the server has the request (a fixed delay may end before a loaded machine
    // even accepts the connection, and closing the listener resets one not yet accepted).
    const received = once(server.server, 'request');
    const batch = call(server.url, 'GET', '/ids?count=1000', agent);
    await received;
    const stopped = server.shutdown();
    expect((await batch).json.ids).toHaveLength(1000);
    expect(await stopped).toEqual({ clean: true });
    agent.destroy();
    const claim = JSON.parse(
      readFileSync(join(dir, `${server.pool.slots[0]?.generator.machine}.claim`), 'utf8'),
    );
    expect(claim.state).toBe('released');
    expect(claim.recordedMs).toBeGreaterThan(SONYFLAKE_LAYOUT.epochMs);
  });
});

describe('node index.mjs', { timeout: 60_000 }, () => {
  const main = join(__dirname, '..', 'index.mjs');

  it('starts on PORT=0, serves, and exits 0 on SIGTERM after the default drain', async () => {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH, PORT: '0', IDS_MACHINE_ID: '9' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const match = /listening on (http:\/\/\S+) with machine ID 9/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.on('exit', (code) => reject(new Error(`exited with ${code} before listening: ${out}`)));
    });
    expect((await call(url, 'GET', '/id')).status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    // The default drain (5 s): readiness 503 while still serving, then the close.
    expect(out).toMatch(
      /SIGTERM: shutting down\ndraining for 5000 ms: readiness answers 503, requests are still served\nclosing: no new connections; requests in flight finish\nstopped\n/,
    );
  }, 60_000);

  it('exits 2 with a message for a bad PORT or IDS_MACHINE_ID', async () => {
    // A bad PORT is the server's configuration error; IDS_MACHINE_ID is read by the one machine-ID
    // chain every entry point shares, whose error is the engine's machine-ID error.
    for (const [env, expected] of [
      [{ PORT: 'eighty' }, /^id-server: ERR_IDS_SERVER_CONFIG: PORT: expected /],
      [{ PORT: '0', IDS_MACHINE_ID: 'x' }, /^id-server: ERR_IDS_MACHINE_ID: IDS_MACHINE_ID: expected /],
    ] as const) {
      const child = spawn(process.execPath, [main], {
        env: { PATH: process.env.PATH, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk;
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(2);
      expect(err).toMatch(expected);
    }
  });
});
