// Load test of @ids/server (`ids-server` in its own process, as deployed) beside a bare
// node:http server and a minimal fastify 5 server in the same run, driven by autocannon over
// loopback. Every ID of every response is kept, and none may repeat across the whole run;
// /metrics is scraped while the batch load runs (not in the GET /id comparison, where the
// baselines have nothing to scrape).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startIdServer } from '@ids/server';
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

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux): on a shared machine the
 * CPU a server spends per request moves much less than its requests/s, which counts the time it
 * waited for a core too.
 */
function cpuSeconds(pid) {
  // The fields after the command name (which may hold spaces) are space-separated; utime and
  // stime are the 14th and 15th of the line.
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

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
    cpuSeconds: () => cpuSeconds(child.pid),
    async stop() {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code;
    },
  };
}

/**
 * Server CPU per request over a fixed count of GET /id (64 connections): every server does the
 * same work, so on a shared machine this moves much less than requests/s, which also counts the
 * time a server waited for a core.
 */
async function cpuPerRequest(server, count) {
  const cpu0 = server.cpuSeconds();
  const result = await autocannon({ url: `${server.url}/id`, connections: 64, amount: count });
  if (result.non2xx + result.errors + result.timeouts > 0)
    throw new Error(`${server.url}: failed requests in the CPU count`);
  return ((server.cpuSeconds() - cpu0) * 1e6) / count;
}

/**
 * CPU per GET /id of a request listener alone, called with stand-in request and response objects
 * in this process: the server's own work (routing, generator, metrics, reply) without the HTTP
 * parser and the socket writes, which cost bare node:http and ids-server the same. In batches of
 * 64, each awaited until every response ended, so a listener that answers later is counted whole.
 */
async function listenerCpu(listener, count) {
  let pending = 0;
  /** @type {(value?: unknown) => void} */
  let wake = () => undefined;
  const response = () => ({
    headersSent: false,
    writeHead() {
      this.headersSent = true;
    },
    setHeader() {},
    destroy() {},
    end() {
      if (--pending === 0) wake();
    },
  });
  const request = () => ({
    method: 'GET',
    url: '/id',
    rawHeaders: ['Host', '127.0.0.1'],
    headers: { host: '127.0.0.1' },
    socket: { remoteAddress: '127.0.0.1' },
    resume() {},
    on() {},
  });
  const batch = async () => {
    pending = 64;
    const done = new Promise((resolve) => {
      wake = resolve;
    });
    for (let i = 0; i < 64; i++) listener(request(), response());
    await done;
  };
  for (let i = 0; i < 500; i++) await batch();
  const batches = Math.ceil(count / 64);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < batches; i++) await batch();
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / (batches * 64);
}

/** The listeners' own CPU per GET /id: bare node:http's and ids-server's (snowflake, 3 machines, below its ceiling). */
async function listenersOwnWork(count) {
  let n = 10n ** 17n;
  const bare = (_req, res) => {
    const body = JSON.stringify({ id: String(n++) });
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  };
  const server = await startIdServer({
    port: 0,
    layout: 'snowflake',
    machines: 3,
    machineIdSource: 'explicit',
    machineIds: [1001, 1002, 1003],
  });
  try {
    const ids = server.server.listeners('request')[0];
    return { bare: await listenerCpu(bare, count), ids: await listenerCpu(ids, count) };
  } finally {
    await server.shutdown();
  }
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

/** The median of a list of numbers. */
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * GET /id of bare node:http, ids-server and fastify, interleaved round after round: on a shared
 * 2-core machine throughput drifts by tens of percent within a minute, so each ratio is taken
 * between runs of the same round, and the spread over the rounds is reported with the median.
 */
export async function benchServer({ seconds = 5, rounds = 5, cpuCount = 40_000 } = {}) {
  const rows = [];
  // Each row's IDs are checked for repeats once its load is over, then dropped: a list kept for
  // the whole run would grow the client's heap (and its GC pauses) in the later rows only. Rows
  // of ids-server issue under machine IDs of their own, so no ID of one can be another's.
  let idCount = 0;
  let duplicates = 0;
  const audit = (ids) => {
    idCount += ids.length;
    duplicates += ids.length - new Set(ids).size;
  };
  let failures = 0;
  let scrapesGood = 0;
  let scrapesBad = 0;
  const row = (label, connections, r, ids, cpuUs, extra) => {
    const elapsed = r.duration;
    rows.push([
      label,
      connections,
      fmt.int(r.requests.total / elapsed),
      fmt.int(ids / elapsed),
      r.latency.p50,
      r.latency.p99,
      cpuUs.toFixed(1),
      extra,
    ]);
    return { rps: r.requests.total / elapsed, p99: r.latency.p99, cpuUs, cells: rows.at(-1) };
  };

  /** One baseline (bare or fastify) for a round. */
  const baseline = async (label, source, against) => {
    const server = await start(['--input-type=module', '-e', source]);
    try {
      await load(server.url, '/id', 8, 1, []);
      // The same client work as for ids-server: every ID kept, then checked.
      const ids = [];
      const { result } = await load(server.url, '/id', 64, seconds, ids);
      audit(ids);
      const cpu = await cpuPerRequest(server, cpuCount);
      const rps = result.requests.total / result.duration;
      return row(
        label,
        64,
        result,
        ids.length,
        cpu,
        against ? `${fmt.pct(rps / against.rps)} of bare` : 'baseline',
      );
    } finally {
      await server.stop();
    }
  };

  /** ids-server for a round, every ID kept. */
  const idsServer = async (round) => {
    const server = await start([bin, '--machines', '3', '--machine-id-source', 'explicit'], {
      PORT: '0',
      // Machine IDs of their own per round: IDs of every round go into one duplicate check.
      IDS_MACHINE_ID: [1, 2, 3].map((k) => round * 3 + k).join(','),
    });
    try {
      await load(server.url, '/id', 8, 1, []);
      // Not scraped here: the baselines have no /metrics, and a comparison loads every server
      // alike. /metrics is scraped under load in the batch row below.
      const ids = [];
      const { result, failures: f } = await load(server.url, '/id', 64, seconds, ids);
      audit(ids);
      // Its IDs are not kept: the bare and fastify counters' IDs of this phase are not either.
      const cpu = await cpuPerRequest(server, cpuCount);
      failures += f;
      // Its comparison is written once the round's bare server has run too.
      return row(`round ${round + 1}: ids-server --machines 3, GET /id`, 64, result, ids.length, cpu, '');
    } finally {
      if ((await server.stop()) !== 0) failures++;
    }
  };

  const ratios = [];
  const fastifyRatios = [];
  const cpuRatios = [];
  const p99Excess = [];
  /** @type {{ bare: number[], ids: number[], fastify: number[] }} */
  const measured = { bare: [], ids: [], fastify: [] };
  for (let round = 0; round < rounds; round++) {
    // The order alternates, so that neither server always runs right after the other.
    const bareFirst = round % 2 === 0;
    const ids = bareFirst ? undefined : await idsServer(round);
    const bare = await baseline(`round ${round + 1}: bare node:http, GET /id`, BARE);
    const issued = ids ?? (await idsServer(round));
    const excess = issued.p99 - bare.p99;
    issued.cells[7] = `${fmt.pct(issued.rps / bare.rps)} of bare; p99 ${excess >= 0 ? '+' : ''}${excess} ms; CPU/request ${fmt.pct(issued.cpuUs / bare.cpuUs)} of bare`;
    const fastify = await baseline(`round ${round + 1}: fastify 5, GET /id (counter)`, FASTIFY, bare);
    measured.bare.push(bare.rps);
    measured.ids.push(issued.rps);
    measured.fastify.push(fastify.rps);
    ratios.push(issued.rps / bare.rps);
    cpuRatios.push(bare.cpuUs / issued.cpuUs);
    fastifyRatios.push(issued.rps / fastify.rps);
    p99Excess.push(excess);
  }

  const four = await start([bin, '--machines', '4', '--machine-id-source', 'explicit'], {
    PORT: '0',
    IDS_MACHINE_ID: '100,101,102,103',
  });
  try {
    await load(four.url, '/ids?count=1000', 4, 1, []);
    const stopScrape = scrape(four.url);
    const batches = [];
    const cpu0 = four.cpuSeconds();
    const { result, failures: f } = await load(four.url, '/ids?count=1000', 8, seconds, batches);
    const cpu = ((four.cpuSeconds() - cpu0) * 1e6) / result.requests.total;
    const scrapes = await stopScrape();
    scrapesGood += scrapes.good;
    scrapesBad += scrapes.bad;
    failures += f;
    audit(batches);
    const ids = batches.length;
    const idsPerSecond = ids / result.duration;
    row(
      'ids-server --machines 4, GET /ids?count=1000',
      8,
      result,
      ids,
      cpu,
      `goal >= 95,000 IDs/s: ${idsPerSecond >= 95_000 ? 'met' : 'NOT met'} (ceiling 102,400)`,
    );
  } finally {
    if ((await four.stop()) !== 0) failures++;
  }

  const own = await listenersOwnWork(200_000);
  const ownRow = (label, us) =>
    rows.push([label, '-', '-', '-', '-', '-', us.toFixed(2), "the server's own work, no parser or socket"]);
  ownRow('bare node:http listener alone (stand-in req/res), GET /id', own.bare);
  ownRow('ids-server listener alone (stand-in req/res), GET /id', own.ids);

  const spread = (xs, f) => `median ${f(median(xs))} (${f(Math.min(...xs))} to ${f(Math.max(...xs))})`;
  const ratio = median(ratios);
  const excess = median(p99Excess);
  const summary = [
    `GET /id over ${rounds} interleaved rounds: requests/s bare ${spread(measured.bare, fmt.int)}, ids-server ${spread(measured.ids, fmt.int)}, fastify ${spread(measured.fastify, fmt.int)}.`,
    `ids-server / bare in the same round: ${spread(ratios, fmt.pct)} (goal >= 90%: ${ratio >= 0.9 ? 'met' : 'NOT met'}); / fastify: ${spread(fastifyRatios, fmt.pct)}.`,
    `Server CPU per request over ${fmt.int(cpuCount)} GET /id, bare / ids-server in the same round (the share of bare's requests/s ids-server would reach were CPU the only limit): ${spread(cpuRatios, fmt.pct)}.`,
    `The listeners' own work (no parser, no socket), CPU per GET /id: bare ${own.bare.toFixed(2)} µs, ids-server ${own.ids.toFixed(2)} µs.`,
    `ids-server p99 - bare p99: ${spread(p99Excess, (ms) => `${ms} ms`)} (goal <= 1 ms: ${excess <= 1 ? 'met' : 'NOT met'}).`,
  ].join('\n');
  const scrapes = `${scrapesGood} /metrics scrapes during the load (${scrapesBad} failed)`;
  const table = `${formatTable(
    [
      'server, request',
      'connections',
      'requests/s',
      'IDs/s',
      'p50 ms',
      'p99 ms',
      'server CPU µs/request (GET /id: fixed count)',
      'against the goals',
    ],
    rows,
  )}\n\n${summary}\n\n${fmt.int(idCount)} IDs in all responses: ${fmt.int(duplicates)} duplicates; ${fmt.int(failures)} failed requests; ${scrapes}.`;
  if (duplicates > 0 || failures > 0 || scrapesBad > 0) {
    throw new Error(`server load test failed\n${table}`);
  }
  return {
    title: `@ids/server (ids-server in its own process, bare node:http and fastify 5 interleaved over ${rounds} rounds; autocannon over loopback, ${seconds} s per row)`,
    table,
  };
}
