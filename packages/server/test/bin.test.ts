// `ids-server` started as a user starts it: every route, the errors, the OpenAPI document
// against real responses, the refusal of unsafe configurations, and SIGTERM under load.
import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { decodeId, ENCODING_NAMES, encodeId } from '@ids/engine';
import { SONYFLAKE_LAYOUT } from '@ids/sonyflake';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BinRun,
  call,
  expectError,
  matchesSpec,
  pollUntil,
  raw,
  runBin,
  scratch,
  startBin,
  takeClaim,
} from './helpers.js';

describe('ids-server with --machines 3 on host claims', () => {
  let run: BinRun;
  let dir: string;
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked by key
  let doc: any;
  const get = (path: string) => call(run.url, 'GET', path);
  const checked = async (method: string, path: string, template: string) => {
    const reply = await call(run.url, method, path);
    matchesSpec(doc, method, template, reply);
    return reply;
  };

  beforeAll(async () => {
    dir = scratch();
    run = await startBin({ IDS_CLAIM_DIR: dir }, ['--machines', '3']);
    doc = (await get('/openapi.json')).json;
  });
  afterAll(async () => {
    await run?.stop();
  });

  it('prints where it listens (loopback by default) and how each machine ID was chosen', () => {
    expect(run.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(run.out()).toMatch(/with machine IDs 0, 1, 2\n/);
    expect(run.out().match(/slot \d: machine ID \d, unique among the processes of this host/g)).toHaveLength(
      3,
    );
    // A claim being renewed has its next version beside it, a hidden temporary file renamed over
    // it a moment later; on a busy machine the listing can catch that moment.
    const files = readdirSync(dir).filter((name) => !/^\..*\.tmp$/.test(name));
    expect(files.sort()).toEqual(['0.claim', '1.claim', '2.claim']);
  });

  it('serves a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    // Without Redis there are no token routes, and the document says so.
    expect(Object.keys(doc.paths)).not.toContain('/tokens');
  });

  it('GET /id: one ID as a string, never cached, from one of the three machine IDs', async () => {
    const machines = new Set<number>();
    for (let i = 0; i < 9; i++) {
      const reply = await checked('GET', '/id', '/id');
      expect(reply.status).toBe(200);
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.json.id).toMatch(/^[1-9][0-9]{0,18}$/);
      machines.add(Number(BigInt(reply.json.id) & 0xffffn));
    }
    expect([...machines].sort()).toEqual([0, 1, 2]);
  });

  it.each(ENCODING_NAMES)('?format=%s encodes /id and /ids, and /ids/{id} reads it back', async (format) => {
    const one = await checked('GET', `/id?format=${format}`, '/id');
    expect(one.status).toBe(200);
    const id = decodeId(one.json.id, format);
    expect(encodeId(id, format)).toBe(one.json.id);
    const many = await checked('GET', `/ids?count=5&format=${format}`, '/ids');
    const ids = (many.json.ids as string[]).map((text) => decodeId(text, format));
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    const parts = await checked(
      'GET',
      `/ids/${encodeURIComponent(one.json.id)}?format=${format}`,
      '/ids/{id}',
    );
    expect(parts.json.decimal).toBe(id.toString());
    expect(parts.json.id).toBe(one.json.id);
  });

  it('GET /ids?count=N: N increasing IDs of one machine, up to 1000', async () => {
    for (const count of [1, 7, 1000]) {
      const reply = await checked('GET', `/ids?count=${count}`, '/ids');
      const ids = (reply.json.ids as string[]).map(BigInt);
      expect(ids).toHaveLength(count);
      for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
      expect(new Set(ids.map((id) => id & 0xffffn)).size).toBe(1);
    }
  });

  it('GET /ids/{id}: the fields under the layout', async () => {
    const { json } = await get('/id');
    const reply = await checked('GET', `/ids/${json.id}`, '/ids/{id}');
    const id = BigInt(json.id);
    expect(reply.json).toEqual({
      id: json.id,
      decimal: json.id,
      layout: 'sonyflake',
      time: new Date(SONYFLAKE_LAYOUT.epochMs + Number(id >> 24n) * 10).toISOString(),
      elapsedMs: Number(id >> 24n) * 10,
      sequence: Number((id >> 16n) & 0xffn),
      machine: Number(id & 0xffffn),
    });
  });

  it('GET /layout: the layout, its limits and the capacity of three machine IDs', async () => {
    const reply = await checked('GET', '/layout', '/layout');
    expect(reply.json).toMatchObject({
      name: 'sonyflake',
      timeBits: 39,
      sequenceBits: 8,
      machineBits: 16,
      timeUnitMs: 10,
      maxId: '9223372036854775807',
      limits: { idsPerSecond: 25_600, machines: 65_536 },
      service: { machines: 3, idsPerSecond: 76_800, maxCount: 1000 },
    });
    expect(reply.json.formats).toEqual([...ENCODING_NAMES]);
  });

  it('GET /health/live and /health/ready: alive, and ready with every claim held', async () => {
    expect((await checked('GET', '/health/live', '/health/live')).json).toEqual({ status: 'live' });
    const ready = await checked('GET', '/health/ready', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({
      ready: true,
      shuttingDown: false,
      machines: [0, 1, 2].map((slot) => ({ slot, machineId: slot, state: 'held' })),
    });
  });

  it('GET /metrics: Prometheus text with IDs issued, waits, clock, claims and HTTP latency', async () => {
    await get('/ids?count=1000');
    const reply = await checked('GET', '/metrics', '/metrics');
    expect(reply.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = reply.text;
    const value = (line: RegExp) => Number(line.exec(text)?.[1]);
    const issued = [0, 1, 2].map((slot) =>
      value(new RegExp(`^ids_issued_total\\{slot="${slot}"\\} (\\d+)$`, 'm')),
    );
    expect(issued.reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0)).toBeGreaterThanOrEqual(1000);
    // 1000 IDs of one machine span four 10 ms ticks: the generator waited for the next tick.
    expect(text).toMatch(/^ids_generator_waits_total\{slot="\d"\} [1-9]\d*$/m);
    expect(text).toMatch(/^ids_generator_wait_seconds_bucket\{le="0.01",slot="\d"\} \d+$/m);
    expect(text).toMatch(/^# TYPE ids_clock_backwards_total counter$/m);
    for (const slot of [0, 1, 2]) {
      expect(text).toContain(`ids_claim_held{slot="${slot}"} 1`);
      expect(text).toContain(`ids_machine_id{slot="${slot}"} ${slot}`);
    }
    expect(text).toMatch(/^# TYPE ids_claim_fences_total counter$/m);
    expect(text).toContain('ids_ready 1');
    expect(text).toMatch(
      /^ids_http_request_duration_seconds_count\{route="\/ids",method="GET",status="200"\} [1-9]/m,
    );
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });

  it('HEAD answers like GET without a body', async () => {
    const reply = await call(run.url, 'HEAD', '/health/live');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
  });

  it.each([
    ['/ids', 'ERR_INVALID_COUNT', /from 1 to 1000, received no count/],
    ['/ids?count=0', 'ERR_INVALID_COUNT', /received "0"/],
    ['/ids?count=1001', 'ERR_INVALID_COUNT', /received "1001"/],
    ['/ids?count=-1', 'ERR_INVALID_COUNT', /received "-1"/],
    ['/ids?count=1.5', 'ERR_INVALID_COUNT', /received "1.5"/],
    ['/ids?count=1e3', 'ERR_INVALID_COUNT', /received "1e3"/],
    ['/ids?count=99999999999999999999', 'ERR_INVALID_COUNT', /received "9999/],
    ['/ids?count=1&count=2', 'ERR_REPEATED_PARAMETER', /count once/],
    ['/ids?count=1&cont=2', 'ERR_UNKNOWN_PARAMETER', /takes count, format, received "cont"/],
    ['/id?format=base64', 'ERR_INVALID_FORMAT', /one of decimal, .*, received "base64"/],
    ['/id?format=', 'ERR_INVALID_FORMAT', /received ""/],
    ['/layout?x=1', 'ERR_UNKNOWN_PARAMETER', /takes no query parameters/],
    ['/ids/abc', 'ERR_IDS_INVALID_ID', /received "abc"/],
    ['/ids/-1', 'ERR_IDS_INVALID_ID', /received "-1"/],
    ['/ids/9223372036854775808', 'ERR_IDS_INVALID_ID', /9223372036854775807/],
    ['/ids/zz?format=hex', 'ERR_IDS_INVALID_ID', /hex/],
    [`/ids/${'1'.repeat(500)}`, 'ERR_IDS_INVALID_ID', /received "1{30}/],
  ])('GET %s is a 400 %s saying what was expected', async (path, code, message) => {
    const reply = await get(path);
    expectError(reply, 400, code, message);
    const template = path.startsWith('/ids/') ? '/ids/{id}' : path.split('?')[0]!;
    matchesSpec(doc, 'GET', template, reply);
  });

  // `/` is the inspector page (inspector.test.ts).
  it.each([
    '/nope',
    '/index.html',
    '/id/',
    '/ids/',
    '/ids/1/2',
    '/health',
    '/health/x',
    '/ID',
    '//id',
    '/tokens',
  ])('GET %s is a 404 listing the routes', async (path) => {
    expectError(
      await get(path),
      404,
      'ERR_NOT_FOUND',
      /expected one of \/id, \/ids, \/ids\/\{id\}, \/layout/,
    );
  });

  it.each([
    ['POST', '/id', 'GET, HEAD'],
    ['PUT', '/ids?count=1', 'GET, HEAD'],
    ['DELETE', '/health/ready', 'GET, HEAD'],
    ['PATCH', '/ids/1', 'GET, HEAD'],
    ['OPTIONS', '/metrics', 'GET, HEAD'],
  ])('%s %s is a 405 with an Allow header', async (method, path, allow) => {
    const reply = await call(run.url, method, path);
    expectError(reply, 405, 'ERR_METHOD_NOT_ALLOWED', new RegExp(`received ${method}`));
    expect(reply.headers.allow).toBe(allow);
  });

  it('a body past 1 KiB is a 413 (the routes take none); a small one is read and ignored', async () => {
    expectError(
      await call(run.url, 'GET', '/id', {
        body: 'x'.repeat(5000),
        headers: { 'content-type': 'text/plain', 'content-length': '5000' },
      }),
      413,
      'ERR_PAYLOAD_TOO_LARGE',
      /at most 1024 bytes/,
    );
    const chunked = await raw(
      run.port,
      `GET /id HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n${'y'.repeat(2048)}\r\n0\r\n\r\n`,
    );
    expect(chunked).toMatch(/^HTTP\/1\.1 413 /);
    expect(
      (await call(run.url, 'GET', '/id', { body: 'ok', headers: { 'content-length': '2' } })).status,
    ).toBe(200);
    // A body sent without framing after a request that closes the connection: the answer is
    // the request's own.
    expect((await call(run.url, 'GET', '/id', { body: 'x'.repeat(5000) })).status).toBe(200);
  });

  it('malformed HTTP and oversized headers get a JSON 400 / 431, and the server keeps serving', async () => {
    const garbage = await raw(run.port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)).error.code).toBe('ERR_BAD_REQUEST');
    const huge = await raw(run.port, `GET /id HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect((await get('/health/live')).status).toBe(200);
  });

  it('issues unique IDs across 200 concurrent requests of both kinds', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(run.url, 'GET', i % 2 ? '/id' : '/ids?count=100', { agent }),
      ),
    );
    agent.destroy();
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const ids = replies.flatMap((r) => r.json.ids ?? [r.json.id]);
    expect(ids).toHaveLength(100 * 100 + 100);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a host claim taken by another process fences its slot; the slot claims again and readiness returns', async () => {
    // Another process takes machine ID 1's file (as a process that found it free would).
    await takeClaim(dir, 1);
    // The claim notices on its next renewal (every 500 ms), the generator is fenced, and the
    // server claims the lowest free ID again: 1 now looks held by this test process, so 3.
    const ready = await pollUntil(
      () => get('/health/ready'),
      (r) => r.json.machines[1].machineId === 3 && r.status === 200,
    );
    expect(ready.json.machines[1]).toEqual({ slot: 1, machineId: 3, state: 'held' });
    expect(ready.status).toBe(200);
    const metrics = (await get('/metrics')).text;
    expect(metrics).toContain('ids_claim_fences_total{slot="1"} 1');
    expect(metrics).toContain('ids_claim_renewals_total{slot="1"} 1');
    expect(metrics).toContain('ids_machine_id{slot="1"} 3');
    const ids = await Promise.all(Array.from({ length: 30 }, () => get('/id')));
    const machines = new Set(ids.map((r) => Number(BigInt(r.json.id) & 0xffffn)));
    expect(machines.has(1)).toBe(false);
    expect(run.err()).toMatch(/the claim on machine ID 1 was lost/);
  });
});

describe('ids-server configuration', () => {
  it('refuses a non-loopback HOST without a token, before listening (exit 2)', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10', 'example.internal']) {
      const result = await runBin({ HOST: host, PORT: '0', IDS_MACHINE_ID: '1' });
      expect(result.code, result.err).toBe(2);
      expect(result.err).toMatch(
        /ERR_IDS_SERVER_CONFIG: host .* is not a loopback address: expected an auth token/,
      );
      expect(result.out).not.toMatch(/listening/);
    }
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT: expected a whole number, received "eighty"/],
    [{ PORT: '70000' }, /port: expected an integer from 0 to 65535, received 70000/],
    [{ IDS_LAYOUT: 'uuid' }, /layout: expected one of sonyflake, .*, received "uuid"/],
    [{ IDS_MACHINES: '0' }, /machines: expected an integer from 1 to 64, received 0/],
    [{ IDS_MACHINE_ID_SOURCE: 'consul' }, /machine-id-source: expected one of auto, .*, received "consul"/],
    [{ IDS_MACHINE_ID: '1,x' }, /IDS_MACHINE_ID: expected machine IDs as whole numbers/],
    [{ IDS_MACHINE_ID: '1', IDS_MACHINES: '2' }, /machine-id: expected 2 machine IDs .*, received 1/],
    [{ IDS_MACHINE_ID: '70000' }, /expected integers from 0 to 65535 .*, received 70000/],
    [{ IDS_AUTH_TOKEN: 'short' }, /auth token: expected at least 16 characters/],
  ])('refuses %j with a message naming the setting', async (env, message) => {
    const result = await runBin({ PORT: '0', ...env });
    expect(result.code).not.toBe(0);
    expect(result.err).toMatch(message);
    expect(result.out).not.toMatch(/listening/);
  });

  it('--help lists every flag with its variable and the machine-ID sources', async () => {
    const result = await runBin({}, ['--help']);
    expect(result.code).toBe(0);
    for (const word of [
      'HOST',
      'PORT',
      'IDS_LAYOUT',
      'IDS_MACHINES',
      'IDS_REDIS_URL',
      'host-claim',
      'etcd',
      'private-ip',
      'IDS_SEGMENT_STORE',
      'IDS_SEGMENT_TAGS',
      'IDS_MACHINE_ID_REDIS_URL',
      'IDS_MACHINE_ID_TTL_SECONDS',
      'IDS_DRAIN_MS',
      'IDS_LOG_FORMAT',
      'IDS_LOG_LEVEL',
      'IDS_ACCESS_LOG',
      '  redis ',
    ]) {
      expect(result.out).toContain(word);
    }
  });

  it('an unknown flag is exit 2; one close to a flag names it', async () => {
    const result = await runBin({}, ['--bogus']);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/bogus/);
    expect(result.err).not.toContain('did you mean');
    const near = await runBin({}, ['--prot', '8080']);
    expect(near.code).toBe(2);
    expect(near.err).toBe(
      'ids-server: ERR_IDS_SERVER_CONFIG: unknown option "--prot"; did you mean --port? expected an option --help lists\n',
    );
  });

  // Every mistake in a flag is one line in the project's words, never Node's parseArgs text
  // ("argument is ambiguous. Did you forget ..."), and exit 2.
  it.each([
    [['--drain', '-1'], '--drain: expected a whole number, received "-1"'],
    [['--port', '-8080'], '--port: expected a whole number, received "-8080"'],
    [['--max-count', '-5'], '--max-count: expected a whole number, received "-5"'],
    [['--port'], '--port: expected a value, received nothing'],
    [['--access-log=yes'], '--access-log: expected no value (it is a switch), received one'],
    [['extra'], 'expected options only, received the argument "extra"'],
    [['--log-level', 'debug'], '--log-level: expected info, warn or error, received "debug"'],
  ])('%j: one line, exit 2', async (args, message) => {
    const result = await runBin({ PORT: '0' }, args);
    expect(result.code).toBe(2);
    expect(result.err).toBe(`ids-server: ERR_IDS_SERVER_CONFIG: ${message}\n`);
    expect(result.out).toBe('');
  });

  it('--version and -v print the package version and start nothing', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    for (const flag of ['--version', '-v']) {
      const result = await runBin({}, [flag]);
      expect([result.code, result.out, result.err]).toEqual([0, `${version}\n`, '']);
    }
  });
});

describe('SIGTERM', () => {
  it('finishes every request in flight, releases the claim, and exits 0', async () => {
    const dir = scratch();
    const run = await startBin({ IDS_CLAIM_DIR: dir, IDS_MAX_COUNT: '8000' });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    // 8 batches of 8000 on one machine ID take 2.5 s: SIGTERM comes once the server has
    // received them all (its in-flight gauge says so; the scrape itself is one more).
    const all = Array.from({ length: 8 }, () => call(run.url, 'GET', '/ids?count=8000', { agent }));
    const inFlight = /^ids_http_requests_in_flight 9$/m;
    const metrics = await pollUntil(
      () => call(run.url, 'GET', '/metrics'),
      (m) => inFlight.test(m.text),
      10,
    );
    const received = inFlight.test(metrics.text);
    expect(received, 'the server had all 8 requests in flight').toBe(true);
    const code = run.stop('SIGTERM');
    const replies = await Promise.all(all);
    agent.destroy();
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    const ids = replies.flatMap((r) => r.json.ids as string[]);
    expect(new Set(ids).size).toBe(64_000);
    expect(await code).toBe(0);
    expect(run.out()).toMatch(/SIGTERM: shutting down\nstopped\n$/);
    const claim = JSON.parse(readFileSync(join(dir, '0.claim'), 'utf8'));
    expect(claim.state).toBe('released');
    // The recorded time covers the last ID issued.
    let last = 0n;
    for (const id of ids) if (BigInt(id) > last) last = BigInt(id);
    expect(claim.recordedMs).toBeGreaterThanOrEqual(SONYFLAKE_LAYOUT.epochMs + Number(last >> 24n) * 10);
  });

  it('SIGINT does the same', async () => {
    const run = await startBin({ IDS_CLAIM_DIR: scratch() });
    expect((await call(run.url, 'GET', '/id')).status).toBe(200);
    expect(await run.stop('SIGINT')).toBe(0);
  });
});
