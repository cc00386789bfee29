// The server in process, with seams: a claim source whose claims the test fences and grants, a
// FakeClock for the clock and the rate limit, and short request bounds.
import { once } from 'node:events';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { FakeClock, type MachineIdClaim, type MachineIdProvider } from '@ids/engine';
import { startImdsTestServer } from '@ids/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkServerOptions,
  isLoopbackHost,
  type RunningIdServer,
  ServerConfigError,
  startIdServer,
} from '../src/index.js';
import { call, expectError, pollUntil, raw, scratch } from './helpers.js';

const running: RunningIdServer[] = [];
async function start(options: Parameters<typeof startIdServer>[0]) {
  const server = await startIdServer({ port: 0, onError: () => undefined, ...options });
  running.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.shutdown()));
});

/** A claim provider the test drives: each claim can be fenced, and re-claims wait for `grant()`. */
function gatedSource() {
  const claims: { claim: MachineIdClaim; abort: AbortController; released: boolean }[] = [];
  let nextId = 100;
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  const provider: MachineIdProvider = async ({ note }) => {
    await gate;
    const abort = new AbortController();
    const entry = {
      abort,
      released: false,
      claim: {
        machineId: nextId++,
        signal: abort.signal,
        release() {
          entry.released = true;
        },
      },
    };
    claims.push(entry);
    note?.(`test claim ${entry.claim.machineId}`);
    return entry.claim;
  };
  return {
    provider,
    claims,
    /** From now on re-claims wait until `grant()`. */
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    grant: () => open(),
  };
}

describe('readiness through a claim fence', () => {
  it('goes false when a claim is fenced (the other generator keeps serving), true after the re-claim', async () => {
    const source = gatedSource();
    const server = await start({ machines: 2, machineIdSource: source.provider });
    const ready = () => call(server.url, 'GET', '/health/ready');
    expect((await ready()).status).toBe(200);

    source.hold();
    source.claims[0]?.abort.abort(new Error('lease lost'));
    const fenced = await ready();
    expect(fenced.status).toBe(503);
    expect(fenced.json).toEqual({
      ready: false,
      shuttingDown: false,
      machines: [
        { slot: 0, machineId: 100, state: 'fenced' },
        { slot: 1, machineId: 101, state: 'held' },
      ],
    });
    // The held generator still serves: every ID comes from machine 101.
    const ids = await Promise.all(Array.from({ length: 20 }, () => call(server.url, 'GET', '/id')));
    expect(ids.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(ids.map((r) => Number(BigInt(r.json.id) & 0xffffn)))).toEqual(new Set([101]));
    const metrics = (await call(server.url, 'GET', '/metrics')).text;
    expect(metrics).toContain('ids_claim_held{slot="0"} 0');
    expect(metrics).toContain('ids_claim_fences_total{slot="0"} 1');
    expect(metrics).toContain('ids_ready 0');

    source.grant();
    const back = await pollUntil(ready, (r) => r.status === 200, 10);
    expect(back.status).toBe(200);
    expect(back.json.machines[0]).toEqual({ slot: 0, machineId: 102, state: 'held' });
    const again = await call(server.url, 'GET', '/ids?count=300');
    expect(again.status).toBe(200);
  });

  it('with every claim fenced, /id is a 503 ERR_NOT_READY with Retry-After; shutdown releases every claim', async () => {
    const source = gatedSource();
    const server = await start({ machines: 2, machineIdSource: source.provider });
    source.hold();
    for (const entry of source.claims) entry.abort.abort(new Error('gone'));
    const reply = await call(server.url, 'GET', '/id');
    expectError(reply, 503, 'ERR_NOT_READY', /no generator holds its machine ID/);
    expect(reply.headers['retry-after']).toBe('1');
    await server.shutdown();
    expect(source.claims.map((c) => c.released)).toEqual([true, true]);
    source.grant();
  });
});

describe('order', () => {
  // These depend on the generator: a batch must not be overtaken by a call made after it, and
  // no ID may be handed out before its tick. They failed on the engine before its concurrency
  // fix, which let a later nextId() take a slot while an earlier nextIds() waited for its next
  // tick.
  it('pipelined requests on one connection are answered in request order, every ID after the last one', async () => {
    const server = await start({ machineIds: [5], machineIdSource: 'explicit' });
    const paths = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? '/ids?count=600' : '/id'));
    const text = await raw(
      server.port,
      paths
        .map(
          (path, i) =>
            `GET ${path} HTTP/1.1\r\nHost: x\r\n${i === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`,
        )
        .join(''),
    );
    const bodies = text
      .split(/HTTP\/1\.1 /)
      .slice(1)
      .map((part) => {
        expect(part.startsWith('200 ')).toBe(true);
        return JSON.parse(part.slice(part.indexOf('\r\n\r\n') + 4));
      });
    expect(bodies).toHaveLength(paths.length);
    const ids = bodies.flatMap((body) => (body.ids ?? [body.id]).map(BigInt));
    for (let i = 1; i < ids.length; i++)
      expect(ids[i]! > ids[i - 1]!, `ID ${i} after ID ${i - 1}`).toBe(true);
  });

  it('no batch is overtaken: concurrent batches and single IDs of one generator never interleave', async () => {
    const server = await start({ machineIds: [6], machineIdSource: 'explicit' });
    const agent = new Agent({ keepAlive: true, maxSockets: 40 });
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(server.url, 'GET', i % 4 === 0 ? '/ids?count=700' : '/id', { agent }),
      ),
    );
    agent.destroy();
    const groups = replies.map((r) => (r.json.ids ?? [r.json.id]).map(BigInt) as bigint[]);
    for (const [g, batch] of groups.entries()) {
      if (batch.length === 1) continue;
      const low = batch[0]!;
      const high = batch.at(-1)!;
      const inside = groups.filter((other, o) => o !== g && other.some((id) => id > low && id < high));
      expect(inside.length, `IDs of ${inside.length} other responses fall inside batch ${g}`).toBe(0);
    }
  });
});

describe('the clock', () => {
  it('a clock behind the bound is a 503 with Retry-After, counted as a clock-backwards event', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const server = await start({
      machineIds: [3],
      machineIdSource: 'explicit',
      clock,
      maxClockBackwardMs: 0,
    });
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    clock.advance(-2000);
    const refused = await call(server.url, 'GET', '/ids?count=300');
    expectError(refused, 503, 'ERR_IDS_CLOCK_BACKWARDS', /behind/);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await call(server.url, 'GET', '/metrics')).text).toContain(
      'ids_clock_backwards_total{slot="0"} 1',
    );
    clock.advance(2010);
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
  });
});

describe('auth and rate limit', () => {
  const token = 'test-token-0123456789abcdef';

  it('with a token, every route but /health/* and /openapi.json wants it', async () => {
    const server = await start({ machineIds: [1], machineIdSource: 'explicit', authToken: token });
    const missing = await call(server.url, 'GET', '/id');
    expectError(
      missing,
      401,
      'ERR_UNAUTHORIZED',
      /expected an Authorization: Bearer <token> header, received none/,
    );
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expectError(
      await call(server.url, 'GET', '/id', { headers: { authorization: `Bearer ${token}x` } }),
      401,
      'ERR_UNAUTHORIZED',
      /not the one/,
    );
    expectError(
      await call(server.url, 'GET', '/metrics', { headers: { authorization: token } }),
      401,
      'ERR_UNAUTHORIZED',
    );
    expect(
      (await call(server.url, 'GET', '/id', { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    for (const path of ['/health/live', '/health/ready', '/openapi.json']) {
      expect((await call(server.url, 'GET', path)).status).toBe(200);
    }
    const doc = (await call(server.url, 'GET', '/openapi.json')).json;
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('the per-client limit answers 429 with Retry-After, refills with time, and counts clients apart', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const server = await start({ machineIds: [2], machineIdSource: 'explicit', rateLimit: 5, clock });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(server.url, 'GET', '/id')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await call(server.url, 'GET', '/layout');
    expectError(
      limited,
      429,
      'ERR_RATE_LIMITED',
      /at most 5 requests per second from one client; retry in 200 ms/,
    );
    expect(limited.headers['retry-after']).toBe('1');
    // Probes are never limited; another client address has its own bucket.
    expect((await call(server.url, 'GET', '/health/ready')).status).toBe(200);
    expect((await call(server.url, 'GET', '/id', { localAddress: '127.0.0.2' })).status).toBe(200);
    clock.advance(400);
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    expect((await call(server.url, 'GET', '/id')).status).toBe(429);
  });

  it('refuses a non-loopback address without a token, by the configuration check (nothing binds)', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.0.2.1', 'ids.example', '[::]']) {
      expect(() => checkServerOptions({ host })).toThrow(ServerConfigError);
      expect(() => checkServerOptions({ host })).toThrow(/not a loopback address: expected an auth token/);
    }
    const open = checkServerOptions({ host: '0.0.0.0', authToken: token });
    expect(open.rateLimit).toBe(1000);
    expect(checkServerOptions({ host: '0.0.0.0', allowUnauthenticated: true }).authToken).toBeUndefined();
    expect(checkServerOptions({ host: '0.0.0.0', authToken: token, rateLimit: 0 }).rateLimit).toBeUndefined();
    expect(checkServerOptions({}).rateLimit).toBeUndefined();
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '128.0.0.1', '::', 'localhost.example', ''])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('slow and broken requests', () => {
  it('a request that does not arrive in time is a JSON 408 and its connection closes; others are served', async () => {
    const server = await start({ machineIds: [4], machineIdSource: 'explicit', requestTimeoutMs: 300 });
    const t0 = performance.now();
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.write('GET /id HTTP/1.1\r\nHost: x\r\n');
    expect((await call(server.url, 'GET', '/id')).status).toBe(200);
    await once(socket, 'close');
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error.code).toBe('ERR_REQUEST_TIMEOUT');
  });
});

describe('shutdown', () => {
  // A bound past the timer maximum (2^31 - 1 ms) used to fire after 1 ms, as Node does with
  // such a timer, and cut the request in flight.
  it.each([
    ['the default bound', undefined],
    ['a bound past the timer maximum', 2 ** 31],
  ])(
    '%s: readiness goes false at once; a request in flight finishes; the claims are released',
    async (_name, shutdownTimeoutMs) => {
      const source = gatedSource();
      const server = await start({
        machineIdSource: source.provider,
        ...(shutdownTimeoutMs ? { shutdownTimeoutMs } : {}),
      });
      const agent = new Agent({ keepAlive: true, maxSockets: 2 });
      // Two keep-alive connections: one for the batch, one to ask for readiness after the
      // listening socket closed.
      const first = await Promise.all([0, 1].map(() => call(server.url, 'GET', '/health/ready', { agent })));
      expect(first.map((r) => r.status)).toEqual([200, 200]);
      const batch = call(server.url, 'GET', '/ids?count=1000', { agent });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const stopping = server.shutdown();
      expect(server.ready).toBe(false);
      const ready = await call(server.url, 'GET', '/health/ready', { agent });
      expect(ready.status).toBe(503);
      expect(ready.json.shuttingDown).toBe(true);
      expect(ready.headers.connection).toBe('close');
      expect((await batch).json.ids).toHaveLength(1000);
      expect(await stopping).toEqual({ clean: true });
      expect(source.claims[0]?.released).toBe(true);
      agent.destroy();
    },
  );
});

describe('machine IDs from the environment', () => {
  it('the auto source runs the opted-in EC2 step (asynchronous): the instance address of a loopback IMDSv2', async () => {
    const imds = await startImdsTestServer('10.0.9.33');
    try {
      const server = await start({
        env: {
          IDS_AUTO_OPT_IN: 'ec2',
          IDS_EC2_ENDPOINT: imds.endpoint,
          // The default 1 s bound is for the real service; a loopback fake on a loaded machine may answer later.
          IDS_EC2_TIMEOUT_MS: '30000',
          IDS_CLAIM_DIR: scratch(),
        },
      });
      expect(server.pool.slots.map((slot) => slot.generator.machine)).toEqual([9 * 256 + 33]);
      expect(server.pool.slots[0]?.how).toMatch(
        /^machine ID 2337 from 10\.0\.9\.33, the instance's private IPv4 .*\n(.*\n)*4\. EC2 metadata: used - /,
      );
      await server.shutdown();
    } finally {
      await imds.close();
    }
  });

  it('IDS_MACHINE_ID of the env option is a list of explicit IDs, for the auto and explicit sources', async () => {
    for (const machineIdSource of ['auto', 'explicit']) {
      const server = await start({ machineIdSource, machines: 2, env: { IDS_MACHINE_ID: '11, 12' } });
      expect(server.pool.slots.map((slot) => slot.generator.machine)).toEqual([11, 12]);
      await server.shutdown();
    }
    await expect(start({ env: { IDS_MACHINE_ID: '1e3' } })).rejects.toThrow(
      /IDS_MACHINE_ID: expected an integer from 0 to 65535, received "1e3"/,
    );
  });
});

describe('plugins', () => {
  it('add routes (the inspector page at /, segment routes) and their part of the OpenAPI document', async () => {
    let closed = false;
    const server = await start({
      machineIds: [8],
      machineIdSource: 'explicit',
      plugins: [
        {
          name: 'inspector',
          routes: [
            {
              method: 'GET',
              path: '/',
              operationId: 'getPage',
              summary: 'The inspector page.',
              responses: { '200': { description: 'The inspector page.' } },
              auth: false,
              handle: () => ({
                text: '<!doctype html><title>ids</title>',
                contentType: 'text/html; charset=utf-8',
              }),
            },
          ],
          close() {
            closed = true;
          },
        },
      ],
    });
    const page = await call(server.url, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<title>ids</title>');
    expect(Object.keys((await call(server.url, 'GET', '/openapi.json')).json.paths)).toContain('/');
    await server.shutdown();
    expect(closed).toBe(true);
  });
});
