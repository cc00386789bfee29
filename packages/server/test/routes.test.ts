// A route is declared once: the router matches requests from its declaration and the OpenAPI
// document describes it from the same one. Shown with a route a plugin adds, and by reading the
// server's sources for a second copy of any path (a hand regex, a hand-kept document key).
import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { FakeClock } from '@ids/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningIdServer, ServerConfigError, type ServerRoute, startIdServer } from '../src/index.js';
import { call, expectError, pollUntil } from './helpers.js';

const running: RunningIdServer[] = [];
async function start(options: Parameters<typeof startIdServer>[0]) {
  const server = await startIdServer({
    port: 0,
    machineIdSource: 'explicit',
    onError: () => undefined,
    ...options,
  });
  running.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.shutdown()));
});

/** One declaration: method, path, parameters, responses and handler. */
const thing: ServerRoute = {
  method: 'GET',
  path: '/things/{name}',
  operationId: 'getThing',
  summary: 'A thing by name.',
  parameters: [
    { name: 'name', in: 'path', description: 'Its name.', schema: { type: 'string' } },
    { name: 'colour', in: 'query', schema: { type: 'string' } },
  ],
  responses: { '200': { description: 'The thing.' } },
  handle: ({ params, query }) => ({ json: { name: params.name, colour: query.get('colour') ?? null } }),
};

describe('a route declared once', () => {
  it('is matched from its declaration: path parameters by name, its query parameters only, GET and HEAD only', async () => {
    const server = await start({ machineIds: [1], plugins: [{ name: 'things', routes: [thing] }] });
    const found = await call(server.url, 'GET', '/things/bolt?colour=red');
    expect(found.status).toBe(200);
    expect(found.json).toEqual({ name: 'bolt', colour: 'red' });
    expectError(
      await call(server.url, 'GET', '/things/bolt?size=2'),
      400,
      'ERR_UNKNOWN_PARAMETER',
      /\/things\/\{name\} takes colour, received "size"/,
    );
    const post = await call(server.url, 'POST', '/things/bolt');
    expectError(post, 405, 'ERR_METHOD_NOT_ALLOWED', /expected GET, HEAD for \/things\/bolt/);
    expect(post.headers.allow).toBe('GET, HEAD');
    for (const path of ['/things', '/things/', '/things/a/b']) {
      expectError(await call(server.url, 'GET', path), 404, 'ERR_NOT_FOUND', /\/things\/\{name\}/);
    }
  });

  it('is in the OpenAPI document from the same declaration, with the errors every route may answer', async () => {
    const server = await start({ machineIds: [1], plugins: [{ name: 'things', routes: [thing] }] });
    const doc = (await call(server.url, 'GET', '/openapi.json')).json;
    const operation = doc.paths['/things/{name}'].get;
    expect(operation).toMatchObject({ operationId: 'getThing', summary: 'A thing by name.' });
    expect(operation.parameters).toEqual([
      { name: 'name', in: 'path', required: true, description: 'Its name.', schema: { type: 'string' } },
      { name: 'colour', in: 'query', required: false, schema: { type: 'string' } },
    ]);
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '429']);
    // Every route of the server is in the document once, under the path it is matched by.
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(
      [
        'GET /',
        'GET /health/live',
        'GET /health/ready',
        'GET /id',
        'GET /ids',
        'GET /ids/{id}',
        'GET /layout',
        'GET /metrics',
        'GET /openapi.json',
        'GET /things/{name}',
      ].sort(),
    );
  });

  it('a template the router cannot match, or a path parameter missing from it, is a ServerConfigError at start', async () => {
    for (const [path, parameters, message] of [
      ['/things/{name', [], /expected a parameter as a whole segment \{name\}, received "\{name"/],
      ['/things/x{name}', [], /received "x\{name\}"/],
      ['things', [], /expected a template starting with \/, received "things"/],
      [
        '/things',
        [{ name: 'name', in: 'path', schema: { type: 'string' } }],
        /path parameter "name" is not in the path/,
      ],
    ] as const) {
      const route = { ...thing, path, parameters } as ServerRoute;
      const failed = start({ machineIds: [2], plugins: [{ name: 'bad', routes: [route] }] });
      await expect(failed).rejects.toThrow(ServerConfigError);
      await expect(failed).rejects.toThrow(message);
    }
  });

  it('no path of the server is written twice in its sources: no hand regex, no hand-kept document key', async () => {
    const server = await start({ machineIds: [3] });
    const doc = (await call(server.url, 'GET', '/openapi.json')).json;
    const dir = join(import.meta.dirname, '..', 'src');
    const sources = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => readFileSync(join(dir, name), 'utf8'))
      .join('\n');
    // A regular expression literal matching a path from its start: how routes were matched by hand.
    expect(sources).not.toMatch(/\/\^\\\/[a-z]/);
    for (const path of Object.keys(doc.paths)) {
      const declared = sources.split(`path: '${path}'`).length - 1;
      expect(declared, `declarations of ${path}`).toBe(1);
      // `/` is also any URL's root, elsewhere; every other path is quoted in its declaration only.
      if (path !== '/') expect(sources.split(`'${path}'`).length - 1, `quotes of ${path}`).toBe(1);
    }
  });
});

describe('counted in plain numbers, read at each scrape', () => {
  it('IDs issued, waits and request latencies are exact, whether an ID is answered at once or after a wait', async () => {
    // A clock that moves only by the generator's own waits: 600 IDs of one Sonyflake machine
    // (256 per tick) take at least two waits, so both ways of answering GET /id are used.
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const server = await start({ machineIds: [4], clock });
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const replies = await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        call(server.url, 'GET', i % 100 === 0 ? '/ids?count=30' : '/id', { agent }),
      ),
    );
    agent.destroy();
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    const ids = replies.flatMap((reply) => reply.json.ids ?? [reply.json.id]);
    expect(ids).toHaveLength(594 + 6 * 30);
    expect(new Set(ids).size).toBe(ids.length);
    const text = (await call(server.url, 'GET', '/metrics')).text;
    const value = (series: string) => Number(text.match(new RegExp(`^${series} (\\S+)$`, 'm'))?.[1]);
    expect(value('ids_issued_total\\{slot="0"\\}')).toBe(ids.length);
    // Each wait once: a refused attempt to answer at once is not a wait.
    expect(clock.sleeps.length).toBeGreaterThanOrEqual(2);
    expect(value('ids_generator_waits_total\\{slot="0"\\}')).toBe(clock.sleeps.length);
    const labels = 'route="/id",method="GET",status="200"';
    expect(value(`ids_http_request_duration_seconds_count\\{${labels}\\}`)).toBe(594);
    expect(value(`ids_http_request_duration_seconds_bucket\\{le="\\+Inf",${labels}\\}`)).toBe(594);
    expect(value(`ids_http_request_duration_seconds_count\\{route="/ids",method="GET",status="200"\\}`)).toBe(
      6,
    );
    // Buckets are cumulative, and a second scrape adds nothing to counts nothing changed.
    const buckets = [
      ...text.matchAll(
        new RegExp(`^ids_http_request_duration_seconds_bucket\\{le="[^"]+",${labels}\\} (\\S+)$`, 'gm'),
      ),
    ].map((m) => Number(m[1]));
    expect(buckets).toHaveLength(12);
    expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
    const again = (await call(server.url, 'GET', '/metrics')).text;
    expect(again).toContain(`ids_issued_total{slot="0"} ${ids.length}\n`);
  });
});

describe("GET /id, answered in the request's own turn", () => {
  it('within the listener call while the generator can issue now; after its wait once the tick is used up', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1), { autoAdvance: false });
    const server = await start({ machineIds: [5], clock });
    const listener = server.server.listeners('request')[0] as (req: unknown, res: unknown) => void;
    const bodies: string[] = [];
    // Stand-ins for what node:http hands the listener: the handler reads only these.
    const get = () =>
      listener(
        {
          method: 'GET',
          url: '/id',
          rawHeaders: ['Host', 'x'],
          headers: { host: 'x' },
          socket: {},
          resume() {},
          on() {},
        },
        {
          headersSent: false,
          setHeader() {},
          writeHead() {},
          end(body: string) {
            bodies.push(body);
          },
        },
      );
    // A Sonyflake tick holds 256 IDs: each is answered before the listener returns.
    for (let i = 0; i < 256; i++) {
      get();
      expect(bodies).toHaveLength(i + 1);
      expect(bodies[i]).toMatch(/^\{"id":"[1-9][0-9]*"\}$/);
    }
    get();
    expect(bodies).toHaveLength(256);
    // The 257th waits for the next tick, on the clock the test moves.
    await pollUntil(
      async () => clock.sleeping,
      (sleeping) => sleeping === 1,
      5,
    );
    clock.advance(10);
    await pollUntil(
      async () => bodies.length,
      (n) => n === 257,
      5,
    );
    const ids = bodies.map((body) => BigInt(JSON.parse(body).id));
    expect(new Set(ids).size).toBe(257);
    expect(ids[256]! > ids[255]!).toBe(true);
  });
});
