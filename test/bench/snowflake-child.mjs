// One generator measured in a process of its own (its own JIT warm-up, heap and event loop):
// `node snowflake-child.mjs <case> <seconds>` prints one JSON line with its figures.
// snowflake.mjs runs every case, one after another, and puts them side by side.

import { wallClock } from '@ids/engine';
import { Snowflake } from '@ids/snowflake';
import { Snowflake as SapphireSnowflake } from '@sapphire/snowflake';
import FlakeId from 'flake-idgen';
import nodejsSnowflake from 'nodejs-snowflake';
import Snowflakify from 'snowflakify';
import { idleLoop, timed, timedAsync, watchLoop } from './lib/measure.mjs';

const TWITTER_EPOCH = 1288834974657;
const WARM_UP_MS = 300;

/** The most IDs per second any case here produces (the fastest peer, which never waits, ~10 M/s). */
const MAX_RATE = 14e6;

/**
 * IDs kept in BigInt64Arrays: no per-ID allocation, so storing costs every case the same. The
 * room for the whole run is allocated before it is timed: allocating (and zeroing) a large
 * array mid-run stalls the process for milliseconds, which costs a 1 ms layout whole ticks.
 */
class Collector {
  /** @type {BigInt64Array[]} */ chunks = [];
  /** @type {BigInt64Array} */ chunk;
  at = 0;
  length = 0;
  /** @param {number} expected how many IDs the run may produce (more still fit, in new chunks) */
  constructor(expected) {
    this.chunk = new BigInt64Array(Math.max(1 << 16, Math.ceil(expected)));
    // Touch every page now, so the OS does not fault them in one by one during the run.
    this.chunk.fill(0n);
    this.chunks.push(this.chunk);
  }
  /** @param {bigint} id */
  push(id) {
    if (this.at === this.chunk.length) {
      this.chunk = new BigInt64Array(1 << 20);
      this.chunks.push(this.chunk);
      this.at = 0;
    }
    this.chunk[this.at++] = id;
    this.length++;
  }
  all() {
    const out = new BigInt64Array(this.length);
    let offset = 0;
    for (const chunk of this.chunks) {
      const part = chunk.subarray(0, Math.min(chunk.length, this.length - offset));
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }
}

/** Duplicates (by sorting a copy) and whether the IDs came out strictly increasing. */
function audit(ids) {
  let increasing = true;
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) increasing = false;
  const sorted = ids.slice().sort();
  let duplicates = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) duplicates++;
  return { duplicates, increasing };
}

/** IDs issued over the slots of every ms from the first ID's to the last one's (see ceilingShare in lib/measure.mjs). */
function slotShare(ids, timeShift, perMs) {
  const first = Number(ids[0] >> timeShift);
  const last = Number(ids[ids.length - 1] >> timeShift);
  return ids.length / ((last - first + 1) * perMs);
}

/** Calls `next` for `ms`, keeping nothing: the JIT sees the real call before anything is timed. */
function warmUp(next) {
  let sink = 0n;
  const until = performance.now() + WARM_UP_MS;
  while (performance.now() < until) for (let i = 0; i < 256; i++) sink ^= next();
  return sink;
}

/** Wall and CPU nanoseconds per ID of a tight loop over `ms`, results folded into a sink. */
function rawCost(next, ms) {
  let sink = 0n;
  let n = 0;
  const r = timed(() => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      for (let i = 0; i < 256; i++) sink ^= next();
      n += 256;
    }
  });
  return { nsPerId: (r.seconds * 1e9) / n, cpuNsPerId: (r.cpuSeconds * 1e9) / n, sink: String(sink & 1n) };
}

/** Sustained synchronous generation for `seconds`, every ID kept for the audit. */
function sustainedSync(next, seconds) {
  const ids = new Collector(seconds * MAX_RATE);
  const r = timed(() => {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) for (let i = 0; i < 256; i++) ids.push(next());
  });
  return { ids: ids.all(), seconds: r.seconds, cpuSeconds: r.cpuSeconds };
}

function report(name, ids, run, extra = {}) {
  const { duplicates, increasing } = audit(ids);
  return {
    name,
    count: ids.length,
    idsPerSecond: ids.length / run.seconds,
    cpuSecondsPerMillion: (run.cpuSeconds / ids.length) * 1e6,
    duplicates,
    increasing,
    ...extra,
  };
}

// Each peer as a function returning a bigint, set up the way its README shows, with Twitter's epoch.
const peers = {
  '@sapphire/snowflake': () => {
    const s = new SapphireSnowflake(BigInt(TWITTER_EPOCH));
    return { next: () => s.generate(), timeShift: 22n, perMs: 4096 };
  },
  'flake-idgen': () => {
    const f = new FlakeId({ id: 1, epoch: TWITTER_EPOCH });
    // Its synchronous next() throws when a ms is used up; calling again until it succeeds is
    // the only synchronous way through, and it spins.
    const next = () => {
      for (;;) {
        try {
          return f.next().readBigInt64BE(0);
        } catch {
          // the ms is used up: try again
        }
      }
    };
    return { next, timeShift: 22n, perMs: 4096 };
  },
  snowflakify: () => {
    const s = new Snowflakify({ epoch: TWITTER_EPOCH });
    return { next: () => s.nextId(), timeShift: 22n, perMs: 4096 };
  },
  'nodejs-snowflake': () => {
    const s = new nodejsSnowflake.Snowflake({ custom_epoch: TWITTER_EPOCH, instance_id: 1 });
    // 42-bit time, 12-bit instance, 10-bit sequence: 1024 IDs per ms.
    return { next: () => s.getUniqueID(), timeShift: 22n, perMs: 1024 };
  },
};

async function ours(kind, seconds) {
  const twitter = (machineId) => new Snowflake({ machineId });
  if (kind === 'sync') {
    const gen = twitter(1);
    warmUp(() => gen.nextIdSync());
    const gen2 = twitter(2);
    const run = sustainedSync(() => gen2.nextIdSync(), seconds);
    return report('@ids/snowflake nextIdSync()', run.ids, run, { share: slotShare(run.ids, 22n, 4096) });
  }
  if (kind === 'raw') {
    // 41-bit ms time, 22-bit sequence, no machine bits: 4,194,304 IDs per ms, a ceiling no
    // caller reaches, so this is the cost of one call.
    const gen = new Snowflake({ nodeBits: 0, stepBits: 22, machineId: 0 });
    warmUp(() => gen.nextIdSync());
    const raw = rawCost(() => gen.nextIdSync(), 1000);
    const run = sustainedSync(() => gen.nextIdSync(), Math.min(seconds, 1));
    return report('@ids/snowflake nextIdSync(), 22-bit sequence', run.ids, run, raw);
  }
  if (kind === 'floor') {
    // The least any generator must do per ID: one read of the same clock and one BigInt
    // compose (the time shifted into place, or-ed with precomputed low bits). No state, no
    // checks: a floor, not a generator.
    const low = 1n << 12n;
    const floor = () => (BigInt(Math.floor(wallClock.now()) - TWITTER_EPOCH) << 22n) | low;
    warmUp(floor);
    const raw = rawCost(floor, 1000);
    return { name: 'floor: one clock read + one BigInt compose', duplicates: 0, ...raw };
  }
  if (kind === 'async-floor') {
    // The least one awaiting caller pays per ID: one clock read, one BigInt compose and one
    // await, stored like the async case. Its rate bounds what any async generator reaches with
    // a single caller on this machine.
    const low = 1n << 12n;
    const floor = () => Promise.resolve((BigInt(Math.floor(wallClock.now()) - TWITTER_EPOCH) << 22n) | low);
    for (let i = 0; i < 200_000; i++) await floor();
    const ids = new Collector(seconds * MAX_RATE);
    const run = await timedAsync(async () => {
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) for (let i = 0; i < 256; i++) ids.push(await floor());
    });
    const idsPerSecond = ids.length / run.seconds;
    return {
      name: 'async floor: await of one clock read + one compose',
      idsPerSecond,
      cpuNsPerId: (run.cpuSeconds * 1e9) / ids.length,
      share: idsPerSecond / 4_096_000,
    };
  }
  const idle = await idleLoop(1000);
  if (kind === 'async') {
    const warm = twitter(3);
    for (let i = 0; i < 200_000; i++) await warm.nextId();
    const gen = twitter(4);
    const ids = new Collector(seconds * MAX_RATE);
    const watched = await watchLoop(() =>
      timedAsync(async () => {
        const until = performance.now() + seconds * 1000;
        while (performance.now() < until) for (let i = 0; i < 256; i++) ids.push(await gen.nextId());
      }),
    );
    const all = ids.all();
    return report('@ids/snowflake nextId()', all, watched.value, {
      share: slotShare(all, 22n, 4096),
      gapMs: watched.longestGapMs,
      idleGapMs: idle.longestGapMs,
    });
  }
  const warm = twitter(5);
  for (let i = 0; i < 50; i++) await warm.nextIds(4096);
  const gen = twitter(6);
  const ids = new Collector(seconds * MAX_RATE);
  const watched = await watchLoop(() =>
    timedAsync(async () => {
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) for (const id of await gen.nextIds(4096)) ids.push(id);
    }),
  );
  const all = ids.all();
  return report('@ids/snowflake nextIds(4096)', all, watched.value, {
    share: slotShare(all, 22n, 4096),
    gapMs: watched.longestGapMs,
    idleGapMs: idle.longestGapMs,
  });
}

async function peer(name, seconds) {
  const { next, timeShift, perMs } = peers[name]();
  warmUp(next);
  const raw = rawCost(next, 1000);
  const run = sustainedSync(next, seconds);
  return report(name, run.ids, run, { share: slotShare(run.ids, timeShift, perMs), perMs, ...raw });
}

const [which = '', secondsText = '2'] = process.argv.slice(2);
const seconds = Number(secondsText);
const result = which.startsWith('ids-') ? await ours(which.slice(4), seconds) : await peer(which, seconds);
console.log(JSON.stringify(result));
