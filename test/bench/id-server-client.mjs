// The load generator of id-server.mjs, in a process of its own so that its CPU, GC and event
// loop are not the server's nor the bench runner's:
// `node id-server-client.mjs <url> <machineId> <scenarios as JSON> [server pid]` prints one JSON
// line per scenario ({ path, connections, seconds }), in order, and nothing else on stdout.
//
// Each connection is a raw keep-alive TCP socket that sends its next request when the last is
// answered (a closed loop, no pipelining). Node's http client, in the runner's process, reached
// about 3,600-5,200 requests/s at 64 connections on a 2-core machine where this one reaches
// 8,000-11,000 against the same server: the client's CPU is taken from the server's, and with it
// the latency measured was mostly the client's own queue. While a scenario runs the client only
// frames responses (status line, Content-Length) and keeps them; once its time is up it checks
// every one of them: status 200, a JSON body with an ID (or `count` IDs) of the expected machine
// ID, no ID dated after the moment its response arrived, IDs increasing on each connection, and
// no ID seen before in this run. Around each scenario it reads the server's own latency
// histogram from /metrics, to tell time spent in the handler (the generator's waits included)
// from time spent queued (in sockets, behind other requests, or for a CPU).
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { decompose, toTime } from '@ids/sonyflake';

const [url = '', machineArg = '', scenariosArg = '[]', serverPid = ''] = process.argv.slice(2);
const { hostname, port } = new URL(url);
const machineId = Number(machineArg);
/** @type {{ path: string, connections: number, seconds: number, warmUp?: boolean }[]} */
const scenarios = JSON.parse(scenariosArg);

const HEADER_END = Buffer.from('\r\n\r\n');
/** A response that has not arrived whole this long after the scenario's end counts as a timeout. */
const STRAGGLER_MS = 10_000;

/**
 * CPU time (user + system, ms) the server process has used, read from /proc on Linux; NaN
 * elsewhere or without a pid. Its clock ticks are 10 ms: over a scenario of thousands of
 * requests that is precise enough for a per-request figure.
 */
function serverCpuMs() {
  try {
    const fields = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * The server's own latency histogram for one route's 200s (`ids_http_request_duration_seconds`:
 * from the request's arrival in the handler to its response handed to the socket), as
 * cumulative counts by upper bound in ms.
 * @returns {Promise<Map<number, number>>}
 */
async function serverHistogram(route) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map();
  for (const [, labels = '', count] of text.matchAll(
    /^ids_http_request_duration_seconds_bucket\{(.*)\} (\d+)$/gm,
  )) {
    const label = Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    if (label.route !== route || label.method !== 'GET' || label.status !== '200') continue;
    counts.set(label.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(label.le) * 1000, Number(count));
  }
  return counts;
}

/**
 * The smallest bucket bound under which 99% of the requests between two scrapes fall, for
 * display: `≤ 5` (ms), `> 1000` past the largest bound, `–` when the histogram was not found.
 */
function serverP99(before, after) {
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  const bounds = [...after.keys()].sort((a, b) => a - b);
  if (total <= 0) return '–';
  for (const bound of bounds) {
    if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= 0.99 * total) {
      return Number.isFinite(bound) ? `≤ ${bound}` : `> ${bounds.at(-2)}`;
    }
  }
  return '–';
}

/** IDs of every scenario so far: an ID seen twice anywhere in the run is a duplicate. */
const seen = new Set();

/**
 * Runs `connections` closed-loop connections on `path` for `seconds`; resolves with what was
 * received, unchecked: latencies (ms), statuses, bodies, the connection and arrival time
 * (Unix ms) of each response, and the errors (socket errors, malformed responses, timeouts).
 */
function load(path, connections, seconds) {
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`, 'latin1');
  const latencies = [];
  const statuses = [];
  const bodies = [];
  const owners = [];
  const arrivals = [];
  let errors = 0;
  let timeouts = 0;
  let open = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  let last = t0;
  return new Promise((resolve) => {
    const sockets = new Set();
    const done = () => {
      clearTimeout(straggler);
      const left = [...sockets];
      sockets.clear();
      for (const socket of left) socket.destroy();
      resolve({
        latencies,
        statuses,
        bodies,
        owners,
        arrivals,
        errors,
        timeouts,
        elapsed: (last - t0) / 1000,
      });
    };
    const straggler = setTimeout(
      () => {
        timeouts += open;
        open = 0;
        done();
      },
      seconds * 1000 + STRAGGLER_MS,
    );
    const start = (index) => {
      const socket = connect({ host: hostname, port: Number(port), noDelay: true });
      sockets.add(socket);
      /** @type {Buffer | null} */
      let pending = null;
      let sentAt = 0;
      let waiting = false;
      const send = () => {
        if (performance.now() >= until) {
          sockets.delete(socket);
          socket.destroy();
          if (--open === 0) done();
          return;
        }
        waiting = true;
        sentAt = performance.now();
        socket.write(request);
      };
      // A connection that fails is counted and replaced, so the load stays at `connections`.
      const fail = () => {
        if (!sockets.delete(socket)) return;
        socket.destroy();
        errors++;
        if (performance.now() < until) start(index);
        else if (--open === 0) done();
      };
      socket.on('connect', send);
      socket.on('error', fail);
      socket.on('close', fail);
      socket.on('data', (chunk) => {
        const buffer = pending === null ? chunk : Buffer.concat([pending, chunk]);
        const headerEnd = buffer.indexOf(HEADER_END);
        if (headerEnd < 0) {
          pending = buffer;
          return;
        }
        const head = buffer.toString('latin1', 0, headerEnd);
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (!waiting || !head.startsWith('HTTP/1.1 ') || length === null) {
          fail();
          return;
        }
        const end = headerEnd + 4 + Number(length[1]);
        if (buffer.length < end) {
          pending = buffer;
          return;
        }
        // One request in flight: bytes past this response cannot be anything but wrong.
        if (buffer.length > end) {
          fail();
          return;
        }
        pending = null;
        waiting = false;
        last = performance.now();
        latencies.push(last - sentAt);
        arrivals.push(Date.now());
        statuses.push(Number(head.slice(9, 12)));
        bodies.push(buffer.toString('latin1', headerEnd + 4, end));
        owners.push(index);
        send();
      });
    };
    open = connections;
    for (let i = 0; i < connections; i++) start(i);
  });
}

/** Checks every response of a scenario (see the header); counts each kind of fault. */
function audit(received, count) {
  const faults = { non200: 0, status503: 0, invalid: 0, foreign: 0, ahead: 0, outOfOrder: 0, duplicates: 0 };
  /** @type {Map<number, bigint>} */
  const lastOf = new Map();
  let ids = 0;
  for (let r = 0; r < received.statuses.length; r++) {
    const status = received.statuses[r];
    if (status !== 200) {
      faults.non200++;
      if (status === 503) faults.status503++;
      continue;
    }
    let list;
    try {
      const json = JSON.parse(received.bodies[r]);
      list = count === 1 ? [json.id] : json.ids;
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list) || list.length !== count) {
      faults.invalid++;
      continue;
    }
    // Date.now() is truncated to the ms: allow that one ms, as the example's load test does.
    const arrived = received.arrivals[r] + 1;
    const owner = received.owners[r];
    for (const text of list) {
      if (typeof text !== 'string' || !/^[1-9][0-9]{0,19}$/.test(text) || BigInt(text) >= 2n ** 63n) {
        faults.invalid++;
        continue;
      }
      ids++;
      const id = BigInt(text);
      if (decompose(id).machine !== machineId) faults.foreign++;
      if (toTime(id).getTime() > arrived) faults.ahead++;
      const before = lastOf.get(owner);
      if (before !== undefined && id <= before) faults.outOfOrder++;
      lastOf.set(owner, id);
      if (seen.has(text)) faults.duplicates++;
      else seen.add(text);
    }
  }
  return { ids, ...faults };
}

for (const { path, connections, seconds, warmUp } of scenarios) {
  const route = path.split('?')[0] ?? path;
  const histogram0 = await serverHistogram(route);
  const cpu0 = process.cpuUsage();
  const server0 = serverCpuMs();
  const received = await load(path, connections, seconds);
  const cpu = process.cpuUsage(cpu0);
  const serverCpu = serverCpuMs() - server0;
  const inServerP99 = serverP99(histogram0, await serverHistogram(route));
  const count = Number(/[?&]count=(\d+)/.exec(path)?.[1] ?? 1);
  const latencies = Float64Array.from(received.latencies).sort();
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  const requests = latencies.length;
  const line = {
    path,
    connections,
    warmUp: warmUp === true,
    requests,
    elapsed: received.elapsed,
    p50: at(0.5),
    p99: at(0.99),
    max: latencies.at(-1) ?? Number.NaN,
    inServerP99,
    errors: received.errors,
    timeouts: received.timeouts,
    clientCpuUs: (cpu.user + cpu.system) / Math.max(1, requests),
    serverCpuUs: (serverCpu * 1000) / Math.max(1, requests),
    ...audit(received, count),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
