// Load test of @ids/server (`ids-server` in its own process, as deployed) beside a bare
// node:http server and a minimal fastify 5 server in the same run, driven by autocannon over
// loopback. Every ID of every response is kept, and none may repeat across the whole run;
// /metrics is scraped while the load runs.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { fmt, formatTable } from './lib/measure.mjs';

const bin = join(dirname(fileURLToPath(import.meta.resolve('@ids/server'))), 'bin.js');
const fastifyEntry = import.meta.resolve('fastify');

// The baselines answer GET /id with a JSON body of the same shape and headers, from a counter:
// what HTTP alone costs, with no generator behind it.
const BARE = `
import { createServer } from 'node:http';
let n = 10n ** 17n;
const server = createServer((req, res) => {
  const body = JSON.stringify({ id: String(n++) });
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;
const FASTIFY = `
const { default: Fastify } = await import(${JSON.stringify(fastifyEntry)});
let n = 10n ** 17n;
const app = Fastify({ logger: false });
app.get('/id', async (req, reply) => { reply.header('cache-control', 'no-store'); return { id: String(n++) }; });
await app.listen({ port: 0, host: '127.0.0.1' });
console.log('listening on http://127.0.0.1:' + app.server.address().port);
process.on('SIGTERM', () => process.exit(0));
`;

/** Starts a server process; resolves with its URL once it prints `listening on <url>`. */
async function start(args, env = {}) {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited with ${code} before listening: ${out}`)),
    );
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code;
    },
  };
}

/** autocannon for `seconds` against one path; every ID of every 200 is kept in `ids`. */
async function load(url, path, connections, seconds, ids) {
  let failures = 0;
  const result = await autocannon({
    url: `${url}${path}`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path,
        onResponse(status, body) {
          if (status !== 200) {
            failures++;
            return;
          }
          const json = JSON.parse(body);
          if (json.id !== undefined) ids.push(json.id);
          else for (const id of json.ids) ids.push(id);
        },
      },
    ],
  });
  return { result, failures: failures + result.errors + result.timeouts + result.non2xx };
}

/** Scrapes /metrics every 250 ms until stopped; counts the scrapes that answered 200 with the server's metrics. */
function scrape(url) {
  let good = 0;
  let bad = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const res = await fetch(`${url}/metrics`);
        const text = await res.text();
        if (res.status === 200 && text.includes('ids_issued_total')) good++;
        else bad++;
      } catch {
        bad++;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return { good, bad };
  };
}

export async function benchServer({ seconds = 5 } = {}) {
  const rows = [];
  const everyId = [];
  let failures = 0;
  const tick = 10;
  const row = (label, connections, r, ids, extra) => {
    const elapsed = r.duration;
    rows.push([
      label,
      connections,
      fmt.int(r.requests.total / elapsed),
      fmt.int(ids / elapsed),
      r.latency.p50,
      r.latency.p99,
      extra,
    ]);
    return r.requests.total / elapsed;
  };

  const bare = await start(['--input-type=module', '-e', BARE]);
  let bareRps;
  try {
    await load(bare.url, '/id', 8, 1, []);
    const { result } = await load(bare.url, '/id', 64, seconds, []);
    bareRps = row('bare node:http, GET /id', 64, result, 0, 'baseline');
  } finally {
    await bare.stop();
  }

  const fastify = await start(['--input-type=module', '-e', FASTIFY]);
  try {
    await load(fastify.url, '/id', 8, 1, []);
    const { result } = await load(fastify.url, '/id', 64, seconds, []);
    const rps = result.requests.total / result.duration;
    row('fastify 5, GET /id (counter)', 64, result, 0, `${fmt.pct(rps / bareRps)} of bare`);
  } finally {
    await fastify.stop();
  }

  const three = await start([bin, '--machines', '3', '--machine-id-source', 'explicit'], {
    PORT: '0',
    IDS_MACHINE_ID: '1,2,3',
  });
  let scrapes3;
  try {
    await load(three.url, '/id', 8, 1, []);
    const stopScrape = scrape(three.url);
    const before = everyId.length;
    const { result, failures: f } = await load(three.url, '/id', 64, seconds, everyId);
    scrapes3 = await stopScrape();
    failures += f;
    const ids = { length: everyId.length - before };
    const rps = result.requests.total / result.duration;
    const p99ok = result.latency.p99 <= tick + 2;
    row(
      'ids-server --machines 3, GET /id',
      64,
      result,
      ids.length,
      `${fmt.pct(rps / bareRps)} of bare (goal >= 50%: ${rps / bareRps >= 0.5 ? 'met' : 'NOT met'}); p99 goal <= ${tick + 2} ms: ${p99ok ? 'met' : 'NOT met'}`,
    );
  } finally {
    if ((await three.stop()) !== 0) failures++;
  }

  const four = await start([bin, '--machines', '4', '--machine-id-source', 'explicit'], {
    PORT: '0',
    IDS_MACHINE_ID: '4,5,6,7',
  });
  let scrapes4;
  try {
    await load(four.url, '/ids?count=1000', 4, 1, []);
    const stopScrape = scrape(four.url);
    const before = everyId.length;
    const { result, failures: f } = await load(four.url, '/ids?count=1000', 8, seconds, everyId);
    scrapes4 = await stopScrape();
    failures += f;
    const ids = { length: everyId.length - before };
    const idsPerSecond = ids.length / result.duration;
    row(
      'ids-server --machines 4, GET /ids?count=1000',
      8,
      result,
      ids.length,
      `goal >= 95,000 IDs/s: ${idsPerSecond >= 95_000 ? 'met' : 'NOT met'} (ceiling 102,400)`,
    );
  } finally {
    if ((await four.stop()) !== 0) failures++;
  }

  const duplicates = everyId.length - new Set(everyId).size;
  const scrapes = `${scrapes3.good + scrapes4.good} /metrics scrapes during the load (${scrapes3.bad + scrapes4.bad} failed)`;
  const table = `${formatTable(
    ['server, request', 'connections', 'requests/s', 'IDs/s', 'p50 ms', 'p99 ms', 'against the goals'],
    rows,
  )}\n\n${fmt.int(everyId.length)} IDs in all responses: ${fmt.int(duplicates)} duplicates; ${fmt.int(failures)} failed requests; ${scrapes}.`;
  if (duplicates > 0 || failures > 0 || scrapes3.bad + scrapes4.bad > 0) {
    throw new Error(`server load test failed\n${table}`);
  }
  return {
    title: `@ids/server (ids-server in its own process beside a bare node:http server and fastify 5; autocannon over loopback, ${seconds} s per row)`,
    table,
  };
}
