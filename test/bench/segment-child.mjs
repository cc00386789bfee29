// One scheme measured in a process of its own: `node segment-child.mjs <case> <seconds> [store]`
// prints one JSON line. segment.mjs runs every case and puts them side by side.
import { setTimeout as sleep, setImmediate as turn } from 'node:timers/promises';
import { mysqlStore, openSegmentStore, Segments } from '@ids/segment';
import { Snowflake } from '@ids/snowflake';
import { Sonyflake } from '@ids/sonyflake';
import { monotonicFactory } from 'ulid';
import { v4, v7 } from 'uuid';
import { timed, timedAsync } from './lib/measure.mjs';

const [kind, secondsText, location] = process.argv.slice(2);
const seconds = Number(secondsText);

/** Wall and CPU ns per call of a tight synchronous loop over `ms`, results folded into a sink. */
function rawCost(next, ms) {
  let sink = 0;
  let n = 0;
  const r = timed(() => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      for (let i = 0; i < 256; i++) sink ^= typeof next() === 'bigint' ? 1 : 0;
      n += 256;
    }
  });
  return { count: n, nsPerId: (r.seconds * 1e9) / n, cpuNsPerId: (r.cpuSeconds * 1e9) / n, sink };
}

function warm(next) {
  const until = performance.now() + 200;
  while (performance.now() < until) next();
}

const p = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];

async function segment(store) {
  const tag = `bench-${process.pid}`;
  // Each case's tag is new: created once, as an operator would, before it is drawn from.
  const created = async (name) => {
    await store.createTag(name, { after: 0n });
    return name;
  };
  // 1. Steady state, dynamic step from Leaf's defaults: a caller awaiting nextId(), letting the
  //    event loop turn once per 100 IDs (as a service answering requests does).
  const steady = await Segments.create({ store, tag: await created(`${tag}-steady`) });
  for (let i = 0; i < 200_000; i++) {
    await steady.nextId();
    if (i % 100 === 99) await turn();
  }
  const trips0 = steady.stats.roundTrips;
  let count = 0;
  const run = await timedAsync(async () => {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      for (let i = 0; i < 100; i++) await steady.nextId();
      count += 100;
      await turn();
    }
  });
  const roundTripsPerMillion = ((steady.stats.roundTrips - trips0) / count) * 1e6;
  const step = steady.stats.step;
  await steady.close();

  // 2. nextIdSync() from memory: a fixed step of 1,000,000, chunks of 50,000 between turns.
  const big = await Segments.create({
    store,
    tag: await created(`${tag}-memory`),
    step: 1_000_000,
    maxStep: 1_000_000,
  });
  // Warmed in chunks with turns between them, as in the timed loop: nextIdSync() never waits, so
  // a loop that never yields would empty both buffers before the next segment could arrive.
  for (const until = performance.now() + 200; performance.now() < until; ) {
    for (let i = 0; i < 50_000; i++) big.nextIdSync();
    await turn();
  }
  let n = 0;
  const mem = await timedAsync(async () => {
    const until = performance.now() + 1000;
    while (performance.now() < until) {
      for (let i = 0; i < 50_000; i++) big.nextIdSync();
      n += 50_000;
      await turn();
    }
  });
  await big.close();

  // 3. Latency of nextId() across segment switches, a fixed step of 1,000 (a switch every 1,000
  //    IDs), each call timed: (a) a caller at about 45,000 IDs/s (50 IDs per 1 ms timer), so a
  //    segment lasts about 20 ms, longer than a store round trip, which is what the double
  //    buffer is for; (b) a saturated caller (100 IDs per event-loop turn), for which a segment
  //    lasts less than a round trip, so a switch waits for the fetch in flight.
  const latency = async (name, pause, every, count) => {
    const small = await Segments.create({
      store,
      tag: await created(`${tag}-${name}`),
      step: 1000,
      maxStep: 1000,
    });
    const all = [];
    const switches = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const id = await small.nextId();
      const us = (performance.now() - t0) * 1000;
      all.push(us);
      if (id % 1000n === 1n) switches.push(us);
      if (i % every === every - 1) await pause();
    }
    await small.close();
    all.sort((a, b) => a - b);
    switches.sort((a, b) => a - b);
    return {
      p99: p(all, 0.99),
      switchP99: p(switches, 0.99),
      switchMax: switches.at(-1),
      switches: switches.length,
    };
  };
  const paced = await latency('paced', () => sleep(1), 50, 100_000);
  const saturated = await latency('saturated', () => turn(), 100, 100_000);
  return {
    name: `segment (${store.kind})`,
    idsPerSecond: count / run.seconds,
    cpuSecondsPerMillion: (run.cpuSeconds / count) * 1e6,
    roundTripsPerMillion,
    step,
    nsPerIdSync: (mem.seconds * 1e9) / n,
    cpuNsPerIdSync: (mem.cpuSeconds * 1e9) / n,
    paced,
    saturated,
  };
}

// The design's ticket table: one store round trip (REPLACE INTO, SELECT LAST_INSERT_ID(), in a
// transaction) per ID, so the caller's rate is the database's. Each call of nextId() is timed.
async function ticket(store) {
  const tag = `bench-${process.pid}`;
  await store.createTag(tag, { after: 0n });
  const segments = await Segments.create({ store, tag });
  for (let i = 0; i < 200; i++) await segments.nextId();
  const trips0 = segments.stats.roundTrips;
  const all = [];
  const run = await timedAsync(async () => {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const t0 = performance.now();
      await segments.nextId();
      all.push((performance.now() - t0) * 1000);
    }
  });
  const count = all.length;
  const roundTripsPerMillion = ((segments.stats.roundTrips - trips0) / count) * 1e6;
  await segments.close();
  all.sort((a, b) => a - b);
  return {
    name: `ticket table (${store.kind})`,
    idsPerSecond: count / run.seconds,
    cpuSecondsPerMillion: (run.cpuSeconds / count) * 1e6,
    roundTripsPerMillion,
    p99: p(all, 0.99),
    max: all.at(-1),
  };
}

async function main() {
  if (kind === 'ticket') {
    const store = await mysqlStore({ connectionString: location, scheme: 'ticket' });
    try {
      return await ticket(store);
    } finally {
      await store.close();
    }
  }
  if (kind === 'segment') {
    const store = await openSegmentStore(location ?? 'pglite:');
    try {
      return await segment(store);
    } finally {
      await store.close();
    }
  }
  if (kind === 'raw') {
    // The reference: @ids/snowflake's nextIdSync() with a layout whose ceiling never binds.
    const gen = new Snowflake({ nodeBits: 0, stepBits: 22, machineId: 0 });
    warm(() => gen.nextIdSync());
    return {
      name: '@ids/snowflake nextIdSync(), 22-bit sequence (raw cost)',
      ...rawCost(() => gen.nextIdSync(), 1000),
    };
  }
  if (kind === 'uuidv7' || kind === 'uuidv4' || kind === 'ulid') {
    const make = kind === 'uuidv7' ? v7 : kind === 'uuidv4' ? v4 : monotonicFactory();
    warm(make);
    const r = rawCost(make, 1000 * seconds);
    return { name: `${kind} (${kind === 'ulid' ? 'ulid' : 'uuid'} package)`, ...r };
  }
  if (kind === 'sonyflake' || kind === 'snowflake') {
    const gen = kind === 'sonyflake' ? new Sonyflake({ machineId: 1 }) : new Snowflake({ machineId: 1 });
    let count = 0;
    const r = timed(() => {
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        for (let i = 0; i < 256; i++) gen.nextIdSync();
        count += 256;
      }
    });
    return {
      name: `${kind} nextIdSync() (at its ceiling)`,
      count,
      nsPerId: (r.seconds * 1e9) / count,
      cpuNsPerId: (r.cpuSeconds * 1e9) / count,
    };
  }
  throw new Error(`unknown case ${kind}`);
}

process.stdout.write(`${JSON.stringify(await main())}\n`);
