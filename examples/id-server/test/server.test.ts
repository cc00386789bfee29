import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoMachineIdError } from '@ids/machine-file';
import {
  FakeClock,
  InvalidArgumentError,
  InvalidMachineIdError,
  MachineIdProviderError,
} from '@ids/sonyflake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseMachineId } from '../machine-id.mjs';
import { createIdHandler, DEFAULT_MAX_COUNT, startIdServer } from '../server.mjs';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of several shapes, checked field by field
  json: any;
}

/** One request with the path sent exactly as given (fetch would normalise it). */
function call(base: string, method: string, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, agent: false, path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Writes raw bytes to the server and reads until it closes the connection. */
async function raw(port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  socket.write(bytes);
  await once(socket, 'close');
  return text;
}

function expectError(reply: Reply, status: number, code: string, message: RegExp) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(reply.json.error.code).toBe(code);
  expect(reply.json.error.message).toMatch(message);
}

describe('the id-server routes', () => {
  let server: Awaited<ReturnType<typeof startIdServer>>;
  const get = (path: string) => call(server.url, 'GET', path);

  beforeAll(async () => {
    server = await startIdServer({ port: 0, machineId: 7 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('listens on the free port it was given 0 for, on loopback', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('GET /id returns one ID as a decimal string, never cached', async () => {
    const reply = await get('/id');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(Object.keys(reply.json)).toEqual(['id']);
    expect(reply.json.id).toMatch(/^[1-9][0-9]{0,18}$/);
    expect(server.sonyflake.decompose(reply.json.id).machine).toBe(7);
  });

  it('GET /ids?count=N returns N distinct increasing IDs, up to the bound', async () => {
    for (const count of [1, 5, DEFAULT_MAX_COUNT]) {
      const reply = await get(`/ids?count=${count}`);
      expect(reply.status).toBe(200);
      const ids = (reply.json.ids as string[]).map(BigInt);
      expect(ids).toHaveLength(count);
      for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    }
  });

  it('GET /decompose/:id takes an ID apart', async () => {
    const { json } = await get('/id');
    const reply = await get(`/decompose/${json.id}`);
    expect(reply.status).toBe(200);
    const parts = server.sonyflake.decompose(json.id);
    expect(reply.json).toEqual({
      id: json.id,
      time: server.sonyflake.toTime(json.id).toISOString(),
      elapsedMs: server.sonyflake.elapsedTime(json.id),
      sequence: parts.sequence,
      machine: 7,
    });
  });

  it('GET /decompose/ takes the edges of the ID range: 0 and 2^63 - 1', async () => {
    const zero = await get('/decompose/0');
    expect(zero.json).toEqual({
      id: '0',
      time: '2014-09-01T00:00:00.000Z',
      elapsedMs: 0,
      sequence: 0,
      machine: 0,
    });
    const max = await get('/decompose/9223372036854775807');
    expect(max.status).toBe(200);
    expect(max.json).toMatchObject({ id: '9223372036854775807', sequence: 255, machine: 65535 });
  });

  it('GET /health says ok and names the machine ID', async () => {
    const reply = await get('/health');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ status: 'ok', machine: 7 });
  });

  it('HEAD answers like GET, without a body', async () => {
    const reply = await call(server.url, 'HEAD', '/health');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
  });

  it.each([
    ['/ids', /received no count/],
    ['/ids?count=', /received ""/],
    ['/ids?count=0', /from 1 to 1000, received "0"/],
    ['/ids?count=1001', /received "1001"/],
    ['/ids?count=-1', /received "-1"/],
    ['/ids?count=1.5', /received "1.5"/],
    ['/ids?count=abc', /received "abc"/],
    ['/ids?count=1e3', /received "1e3"/],
    ['/ids?count=0x10', /received "0x10"/],
    ['/ids?count=%205', /received " 5"/],
    ['/ids?count=99999999999999999999', /received "99999999999999999999"/],
    ['/ids?count=1&count=2', /received 2 count parameters/],
  ])('GET %s is a 400 naming the bound', async (path, message) => {
    expectError(await get(path), 400, 'ERR_INVALID_COUNT', message);
  });

  it.each([
    ['abc', 'abc', /decimal string of 1 to 19 digits, received "abc"/],
    ['-1', '-1', /received "-1"/],
    ['1.5', '1.5', /received "1.5"/],
    ['%31 (not decoded)', '%31', /received "%31"/],
    ['0x1f', '0x1f', /received "0x1f"/],
    ['nothing', '', /received ""/],
    [
      '2^63',
      '9223372036854775808',
      /from 0 to 2\^63 - 1 \(9223372036854775807\), received 9223372036854775808/,
    ],
    ['20 digits', '99999999999999999999', /1 to 19 digits, received "99999999999999999999"/],
    ['500 digits', '1'.repeat(500), /received "1{77}\.\.\." \(string\)$/],
  ])('GET /decompose/ with %s is a 400 saying what an ID is', async (_label, segment, message) => {
    expectError(await get(`/decompose/${segment}`), 400, 'ERR_IDS_INVALID_ID', message);
  });

  it.each([
    '/',
    '/nope',
    '/id/',
    '/id/extra',
    '/ids/',
    '/decompose',
    '/decompose/1/2',
    '/health/x',
    '/ID',
    '//id',
  ])('GET %s is a 404 listing the routes', async (path) => {
    expectError(
      await get(path),
      404,
      'ERR_NOT_FOUND',
      /expected \/id, \/ids\?count=N, \/decompose\/:id or \/health/,
    );
  });

  it.each([
    ['POST', '/id'],
    ['PUT', '/ids?count=1'],
    ['DELETE', '/health'],
    ['PATCH', '/decompose/1'],
    ['OPTIONS', '/id'],
  ])('%s %s is a 405 with an Allow header', async (method, path) => {
    const reply = await call(server.url, method, path);
    expectError(
      reply,
      405,
      'ERR_METHOD_NOT_ALLOWED',
      new RegExp(`expected GET or HEAD .*received ${method}`),
    );
    expect(reply.headers.allow).toBe('GET, HEAD');
  });

  it('answers malformed HTTP with a 400 JSON error and keeps serving', async () => {
    const garbage = await raw(server.port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)).error.code).toBe('ERR_BAD_REQUEST');
    const huge = await raw(
      server.port,
      `GET /id HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect((await get('/health')).status).toBe(200);
  });

  it('issues unique IDs across concurrent requests', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(i % 2 ? '/id' : '/ids?count=50')),
    );
    const ids = replies.flatMap((reply) => reply.json.ids ?? [reply.json.id]);
    expect(ids).toHaveLength(20 * 50 + 20);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('when the generator cannot issue IDs', () => {
  it('answers 503 while the clock is stepped back past the bound, then recovers', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const server = await startIdServer({ machineId: 3, settings: { clock, maxClockBackwardMs: 0 } });
    try {
      expect((await call(server.url, 'GET', '/id')).status).toBe(200);
      clock.advance(-2000);
      // As in Go, IDs continue in the last tick used while it has sequence numbers left; the
      // batch needs the next tick, which the clock is 2 s short of.
      const refused = await call(server.url, 'GET', '/ids?count=300');
      expectError(refused, 503, 'ERR_IDS_CLOCK_BACKWARDS', /behind|back/);
      expect(refused.headers['retry-after']).toBe('1');
      // The batch used the last tick's sequence numbers: /id cannot answer, and /health says so.
      expectError(await call(server.url, 'GET', '/id'), 503, 'ERR_IDS_CLOCK_BACKWARDS', /behind|back/);
      expectError(await call(server.url, 'GET', '/health'), 503, 'ERR_IDS_CLOCK_BACKWARDS', /behind|back/);
      clock.advance(2010);
      expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('answers 503 once the generator is closed, and 500 without detail for an unexpected failure', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const server = await startIdServer({ machineId: 4, settings: { clock } });
    const healthy = await call(server.url, 'GET', '/health');
    expect(healthy.status, JSON.stringify(healthy.json)).toBe(200);
    await server.sonyflake.close();
    expectError(await call(server.url, 'GET', '/id'), 503, 'ERR_IDS_CLOSED', /closed/);
    // /health tells the truth: not 200 while /id cannot answer.
    expectError(await call(server.url, 'GET', '/health'), 503, 'ERR_IDS_CLOSED', /closed/);
    await server.close();

    const seen: unknown[] = [];
    const broken = { machine: 1, nextId: () => Promise.reject(new TypeError('boom')) };
    const handler = createIdHandler(broken as never, { onError: (error) => seen.push(error) });
    const { createServer } = await import('node:http');
    const http = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as { port: number };
    try {
      expectError(
        await call(`http://127.0.0.1:${port}`, 'GET', '/id'),
        500,
        'ERR_INTERNAL',
        /^internal error$/,
      );
      expect(seen).toHaveLength(1);
      // The server keeps serving, and /health does not claim that /id works.
      expectError(
        await call(`http://127.0.0.1:${port}`, 'GET', '/health'),
        500,
        'ERR_INTERNAL',
        /^internal error$/,
      );
      expect(seen).toHaveLength(2);
    } finally {
      http.close();
    }
  });
});

describe('configuration', () => {
  it('takes the machine ID from the option, else the auto chain (IDS_MACHINE_ID, private IPv4, host claim)', () => {
    expect(chooseMachineId({ machineId: 5 }, { IDS_MACHINE_ID: '9' })).toEqual({
      machineId: 5,
      how: 'given as the machineId option',
    });
    const fromEnv = chooseMachineId({}, { IDS_MACHINE_ID: '9' });
    expect(fromEnv.machineId).toBe(9);
    expect(fromEnv.how).toMatch(/^1\. explicit ID: used - machine ID 9 from IDS_MACHINE_ID$/);
  });

  it('without an explicit ID, uses the auto chain and says how; the claim is released on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-id-server-'));
    const server = await startIdServer({ env: { IDS_CLAIM_DIR: dir } });
    try {
      expect(server.machineIdFrom).toMatch(/^1\. explicit ID: skipped/);
      expect(server.machineIdFrom).toMatch(/(private IPv4|host claim): used - machine ID \d+/);
    } finally {
      await server.close();
    }
    const again = await startIdServer({ env: { IDS_CLAIM_DIR: dir } });
    await again.close();
    expect(again.sonyflake.machine).toBe(server.sonyflake.machine);
  });

  it.each(['abc', '-1', '1.5', '1e3', '0x10', ' 7', '99999999999'])(
    'refuses IDS_MACHINE_ID=%j with the chain error, whose cause is InvalidMachineIdError',
    (value) => {
      let error: unknown;
      try {
        chooseMachineId({}, { IDS_MACHINE_ID: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AutoMachineIdError);
      expect((error as Error).cause).toBeInstanceOf(InvalidMachineIdError);
      expect((error as Error).message).toContain(
        `IDS_MACHINE_ID: expected an integer from 0 to 65535, received ${JSON.stringify(value)}`,
      );
    },
  );

  it('refuses a machine ID out of range, a bad port and a bad maxCount before listening', async () => {
    await expect(startIdServer({ env: { IDS_MACHINE_ID: '65536' } })).rejects.toThrow(AutoMachineIdError);
    await expect(startIdServer({ machineId: 1, port: 70000 })).rejects.toThrow(InvalidArgumentError);
    await expect(startIdServer({ machineId: 1, port: -1 })).rejects.toThrow(/port: expected an integer/);
    await expect(startIdServer({ machineId: 1, maxCount: 0 })).rejects.toThrow(
      /maxCount: expected an integer/,
    );
    await expect(startIdServer({ machineId: 1, maxCount: 1.5 })).rejects.toThrow(InvalidArgumentError);
  });

  it('with neither option nor IDS_MACHINE_ID, uses settings.machineId, and a failing provider stops the start', async () => {
    const start = startIdServer({
      env: {},
      settings: {
        machineId: () => {
          throw new Error('no private IPv4 here');
        },
      },
    });
    await expect(start).rejects.toThrow(MachineIdProviderError);
    const provided = await startIdServer({ env: {}, settings: { machineId: () => 12 } });
    expect(provided.sonyflake.machine).toBe(12);
    await provided.close();
  });

  it('a smaller maxCount bounds /ids', async () => {
    const server = await startIdServer({ machineId: 2, maxCount: 10 });
    try {
      expect((await call(server.url, 'GET', '/ids?count=10')).status).toBe(200);
      expectError(await call(server.url, 'GET', '/ids?count=11'), 400, 'ERR_INVALID_COUNT', /from 1 to 10,/);
    } finally {
      await server.close();
    }
  });

  it('reports a port in use as the listen error, and closes its generator', async () => {
    const first = await startIdServer({ machineId: 1 });
    try {
      await expect(startIdServer({ machineId: 2, port: first.port })).rejects.toMatchObject({
        code: 'EADDRINUSE',
      });
    } finally {
      await first.close();
    }
  });

  it('close() lets a request in flight on a keep-alive connection finish, then stops at once', async () => {
    // A clock whose sleeps wait for the test: the batch below needs a second tick, so its
    // request is held inside the generator until the test opens the gate.
    let sleeping!: () => void;
    const asleep = new Promise<void>((resolve) => {
      sleeping = resolve;
    });
    let wake!: () => void;
    const gate = new Promise<void>((resolve) => {
      wake = resolve;
    });
    class GatedClock extends FakeClock {
      override sleep(ms: number): Promise<void> {
        this.sleepSync(ms);
        sleeping();
        return gate;
      }
    }
    const server = await startIdServer({
      machineId: 6,
      settings: { clock: new GatedClock(Date.UTC(2026, 0, 1)) },
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const reply = new Promise<Reply>((resolve, reject) =>
      httpRequest(`${server.url}/ids?count=300`, { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: JSON.parse(text) }),
        );
      })
        .on('error', reject)
        .end(),
    );
    await asleep;
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed, 'close() waits for the request in flight').toBe(false);
    const t0 = performance.now();
    wake();
    const { status, json } = await reply;
    expect(status).toBe(200);
    expect(json.ids).toHaveLength(300);
    await closing;
    // The keep-alive socket is closed once idle, not left to its 5 s timeout.
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(server.server.listening).toBe(false);
    agent.destroy();
  });
});

describe('node index.mjs', () => {
  it('starts on PORT=0, serves, and exits cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'index.mjs')], {
      env: { ...process.env, PORT: '0', IDS_MACHINE_ID: '9' },
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
    const reply = await call(url, 'GET', '/id');
    expect(reply.status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(out).toMatch(/stopped on SIGTERM/);
  });

  it('exits 1 with a message for a bad PORT or IDS_MACHINE_ID', async () => {
    for (const env of [{ PORT: 'eighty' }, { PORT: '0', IDS_MACHINE_ID: 'x' }]) {
      const child = spawn(process.execPath, [join(__dirname, '..', 'index.mjs')], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk;
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(err).toMatch(
        /id-server could not start: (PORT: expected|no machine ID: IDS_MACHINE_ID: expected)/,
      );
    }
  });
});
