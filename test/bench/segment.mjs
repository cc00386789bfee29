// Every scheme in one run, each case in a child process of its own (segment-child.mjs):
//  1. segment on PGlite, a real PostgreSQL, a real MySQL (MariaDB, Leaf's leaf_alloc) and a real
//     Redis (started here on loopback): IDs/s and CPU per million at steady state, store round
//     trips per million IDs, nextIdSync() from memory, and the latency of nextId() across segment
//     switches; and the design's MySQL ticket table, one round trip per ID;
//  2. UUIDv7, UUIDv4 (uuid) and ULID (ulid) per call, Sonyflake and snowflake nextIdSync(), and
//     the raw cost of @ids/snowflake's nextIdSync() the segment goal is measured against.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  hasMariadb,
  hasPostgres,
  hasRedis,
  startMariadb,
  startPostgres,
  startRedis,
} from '@ids/test-services';
import { fmt, formatTable } from './lib/measure.mjs';

const child = join(dirname(fileURLToPath(import.meta.url)), 'segment-child.mjs');

function measure(which, seconds, location) {
  const run = spawnSync(process.execPath, [child, which, String(seconds), ...(location ? [location] : [])], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (run.status !== 0) throw new Error(`benchmark case ${which} failed (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '');
}

export async function benchSegment({ seconds = 2 } = {}) {
  const raw = measure('raw', seconds);
  const servers = [];
  const stores = ['pglite:'];
  if (hasPostgres()) {
    const pg = await startPostgres();
    servers.push(pg);
    stores.push(pg.url);
  }
  let mysqlUrl;
  if (hasMariadb()) {
    const mysql = await startMariadb();
    servers.push(mysql);
    stores.push(mysql.url);
    mysqlUrl = mysql.url;
  }
  if (hasRedis()) {
    const redis = await startRedis();
    servers.push(redis);
    stores.push(redis.url);
  }
  let segments;
  let ticket;
  try {
    segments = stores.map((location) => measure('segment', seconds, location));
    ticket = mysqlUrl ? measure('ticket', seconds, mysqlUrl) : undefined;
  } finally {
    for (const server of servers) await server.close();
  }
  const others = ['uuidv7', 'uuidv4', 'ulid', 'sonyflake', 'snowflake'].map((k) => measure(k, seconds));

  const segmentTable = formatTable(
    [
      'store',
      'IDs/s (nextId(), steady)',
      'CPU s per 1M IDs',
      'store round trips per 1M IDs',
      'step reached',
      'nextIdSync() ns per ID (CPU ns)',
      'CPU vs raw nextIdSync()',
      'p99 nextId() µs (45k IDs/s)',
      'p99 / max at a switch µs (45k IDs/s)',
      'p99 / max at a switch µs (saturated)',
    ],
    [
      ...segments.map((r) => [
        r.name,
        fmt.int(r.idsPerSecond),
        fmt.s(r.cpuSecondsPerMillion),
        r.roundTripsPerMillion.toFixed(1),
        fmt.int(r.step),
        `${r.nsPerIdSync.toFixed(1)} (${r.cpuNsPerIdSync.toFixed(1)})`,
        `${(r.cpuNsPerIdSync / raw.cpuNsPerId).toFixed(2)}x`,
        r.paced.p99.toFixed(1),
        `${r.paced.switchP99.toFixed(1)} / ${r.paced.switchMax.toFixed(1)} (${r.paced.switches})`,
        `${r.saturated.switchP99.toFixed(1)} / ${r.saturated.switchMax.toFixed(1)} (${r.saturated.switches})`,
      ]),
      // Every ID of the ticket table is a switch (a round trip): its p99 is the saturated column's.
      ...(ticket
        ? [
            [
              ticket.name,
              fmt.int(ticket.idsPerSecond),
              fmt.s(ticket.cpuSecondsPerMillion),
              ticket.roundTripsPerMillion.toFixed(1),
              '1 (fixed)',
              '-',
              '-',
              '-',
              '-',
              `${ticket.p99.toFixed(1)} / ${ticket.max.toFixed(1)} (every ID)`,
            ],
          ]
        : []),
    ],
  );
  const schemeTable = formatTable(
    ['generator', 'IDs/s', 'ns per ID', 'CPU ns per ID', 'CPU s per 1M IDs'],
    [raw, ...others].map((r) => [
      r.name,
      fmt.int(1e9 / r.nsPerId),
      r.nsPerId.toFixed(1),
      r.cpuNsPerId.toFixed(1),
      fmt.s(r.cpuNsPerId / 1000),
    ]),
  );
  const worstSwitch = Math.max(...segments.map((r) => r.paced.switchP99));
  const worstTrips = Math.max(...segments.map((r) => r.roundTripsPerMillion));
  const worstRatio = Math.max(...segments.map((r) => r.cpuNsPerIdSync / raw.cpuNsPerId));
  const verdict = [
    `Goals: nextIdSync() from memory within 2x of raw nextIdSync() (CPU ns per ID): worst ${worstRatio.toFixed(2)}x;`,
    `p99 of nextId() at a segment switch < 1 ms (a caller at 45k IDs/s, step 1,000): worst ${(worstSwitch / 1000).toFixed(3)} ms;`,
    `< 1 store round trip per 1,000 IDs (1,000 per 1M) at steady state: worst ${worstTrips.toFixed(1)} per 1M.`,
    'Steady state: Leaf defaults (step from 1,000, doubling while a segment lasts under 15 minutes, up to 1,000,000),',
    'a caller awaiting nextId() and letting the event loop turn every 100 IDs. Switch latency: a fixed step of 1,000;',
    'a saturated caller empties a 1,000-ID segment faster than a store round trip, so its switches wait for the fetch.',
    "The ticket table (the design's MySQL scheme) makes one round trip per ID, by design: not held to these goals.",
  ].join('\n');
  return {
    title: 'Segment beside UUIDv7, ULID, Sonyflake and snowflake',
    table: `${segmentTable}\n\n${schemeTable}\n\n${verdict}`,
  };
}
