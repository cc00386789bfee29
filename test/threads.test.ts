import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  createSharedState,
  defineLayout,
  type Layout,
  type SharedGeneratorState,
  sharedStateCell,
  tickStartMs,
} from '@ids/engine';
import { claimHostMachineId } from '@ids/machine-file';
import { Snowflake, snowflakeLayout } from '@ids/snowflake';
import { Sonyflake, sonyflakeLayout } from '@ids/sonyflake';
import { describe, expect, it } from 'vitest';
import { fixture, increasing, max, min, readJson, tempDir } from './helpers.js';

// Worker threads of one process drawing IDs at the same time from one generator state in a
// SharedArrayBuffer, under one machine ID held by the main thread.

interface Threads {
  ids: bigint[][];
  /** With `audit`: each thread's wall clock right after each of its IDs returned. */
  times: number[][];
  /** The error that stopped each thread's drawing, if any (its name). */
  errors: (string | undefined)[];
  after(): Promise<string[]>;
}

/** `layout`: a LayoutSpec for a plain IdGenerator; `snowflake`: settings for a Snowflake; neither: a Sonyflake. */
async function draw(
  shared: SharedGeneratorState,
  count: number,
  build: { layout?: object; snowflake?: object; audit?: boolean; seconds?: number } = {},
  whileDrawing?: () => void,
): Promise<Threads> {
  const gate = new SharedArrayBuffer(8);
  const gateView = new Int32Array(gate);
  const workers = Array.from(
    { length: 4 },
    () =>
      new Worker(fixture('thread-worker.mjs'), {
        workerData: { shared, gate, count: build.seconds === undefined ? count : undefined, ...build },
      }),
  );
  const results = workers.map(
    (worker) =>
      new Promise<{ ids: bigint[]; times: number[]; error?: string }>((resolve, reject) => {
        worker.once('message', (message) =>
          resolve({
            ids: Array.from(message.ids as BigUint64Array),
            times: Array.from(message.times as Float64Array),
            error: message.error,
          }),
        );
        worker.once('error', reject);
      }),
  );
  // Start them together, once all four are waiting at the gate.
  while (Atomics.load(gateView, 1) < 4) await new Promise((resolve) => setTimeout(resolve, 5));
  Atomics.store(gateView, 0, 1);
  Atomics.notify(gateView, 0);
  whileDrawing?.();
  const drawn = await Promise.all(results);
  return {
    ids: drawn.map((d) => d.ids),
    times: drawn.map((d) => d.times),
    errors: drawn.map((d) => d.error),
    after: () =>
      Promise.all(
        workers.map(
          (worker) =>
            new Promise<string>((resolve) => {
              worker.once('message', (message) => {
                resolve(message.after);
                void worker.terminate();
              });
              worker.postMessage('again');
            }),
        ),
      ),
  };
}

function overlapping(perThread: bigint[][]): boolean {
  // Every thread's first ID comes before every other thread's last: they drew at the same time.
  const firsts = perThread.map((ids) => ids[0]!);
  const lasts = perThread.map((ids) => ids.at(-1)!);
  return max(firsts) < min(lasts);
}

/** IDs handed out before their tick started, by the drawing thread's clock right after the call returned. */
function ahead(layout: Layout, threads: Threads): { ahead: number; maxLeadMs: number } {
  let count = 0;
  let maxLeadMs = 0;
  threads.ids.forEach((ids, t) => {
    ids.forEach((id, i) => {
      const lead =
        tickStartMs(layout, Number(id >> BigInt(layout.sequenceBits + layout.machineBits))) -
        threads.times[t]![i]!;
      if (lead > 0) {
        count++;
        maxLeadMs = Math.max(maxLeadMs, lead);
      }
    });
  });
  return { ahead: count, maxLeadMs };
}

describe('one machine ID shared by worker threads', () => {
  it('4 threads on one Sonyflake state, at the ceiling for 1 s: no ID before its tick, no error, each thread increasing', async () => {
    const layout = sonyflakeLayout({});
    const shared = createSharedState(layout, 3);
    const threads = await draw(shared, 0, { audit: true, seconds: 1 });
    const all = threads.ids.flat();
    expect(threads.errors).toEqual([undefined, undefined, undefined, undefined]);
    expect(all.length).toBeGreaterThan(10_000);
    expect(new Set(all).size).toBe(all.length);
    for (const ids of threads.ids) expect(increasing(ids)).toBe(true);
    expect(ahead(layout, threads)).toEqual({ ahead: 0, maxLeadMs: 0 });
    await threads.after();
  });

  it('4 threads on one 1 ms, 12-bit-sequence state: no ID before its tick, no error, each thread increasing', async () => {
    const spec = { timeBits: 41, timeUnitMs: 1, sequenceBits: 12, machineBits: 10, epochMs: 1288834974657 };
    const layout = defineLayout(spec);
    const shared = createSharedState(layout, 1);
    const threads = await draw(shared, 100_000, { layout: spec, audit: true });
    const all = threads.ids.flat();
    expect(threads.errors).toEqual([undefined, undefined, undefined, undefined]);
    expect(new Set(all).size).toBe(400_000);
    for (const ids of threads.ids) expect(increasing(ids)).toBe(true);
    expect(ahead(layout, threads)).toEqual({ ahead: 0, maxLeadMs: 0 });
    await threads.after();
  });

  it("threads stop at the holder's claim deadline while the holder's main thread is blocked past it", async () => {
    const layout = sonyflakeLayout({});
    // A lease-like claim confirmed until `deadline`: its renewals would run on the main thread,
    // which is blocked below, so nothing renews it and nothing on the main thread notices it lapse.
    let deadline = Number.POSITIVE_INFINITY;
    const claim = {
      machineId: 9,
      trustedForMs: () => Math.max(0, deadline - Date.now()),
      release: () => undefined,
    };
    const shared = createSharedState(layout, claim);
    let holder: Sonyflake | undefined;
    const threads = await draw(shared, 0, { audit: true, seconds: 1.5 }, () => {
      // Once the threads are drawing, the holder takes the claim, confirmed for 400 ms more...
      deadline = Date.now() + 400;
      holder = new Sonyflake({ machineId: claim, state: sharedStateCell(shared) });
      // ...and its thread is then busy for 1.2 s, past the deadline: no timer, no listener runs.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200);
    });
    expect(threads.errors).toEqual([
      'MachineIdLostError',
      'MachineIdLostError',
      'MachineIdLostError',
      'MachineIdLostError',
    ]);
    const all = threads.ids.flat();
    expect(all.length).toBeGreaterThan(1000);
    // No ID of a tick at or after the deadline: a successor starting there cannot collide.
    const lastStart = Math.max(...all.map((id) => tickStartMs(layout, holder!.decompose(id).time)));
    expect(lastStart).toBeLessThan(deadline);
    await holder!.close();
    await threads.after();
  });

  it('4 threads x 10,000 Sonyflake IDs under one host claim: 0 duplicates, each thread increasing; closing the holder stops them', async () => {
    const dir = tempDir('threads');
    const claim = claimHostMachineId(16, { dir });
    const layout = sonyflakeLayout({});
    const shared = createSharedState(layout, claim);
    const holder = new Sonyflake({ machineId: claim, state: sharedStateCell(shared) });
    const threads = await draw(shared, 10_000);
    const all = threads.ids.flat();
    expect(all).toHaveLength(40_000);
    expect(new Set(all).size).toBe(40_000);
    for (const ids of threads.ids) expect(increasing(ids)).toBe(true);
    expect(all.every((id) => holder.decompose(id).machine === claim.machineId)).toBe(true);
    expect(overlapping(threads.ids)).toBe(true);
    // Fully used ticks: the threads together filled the slots between their first and last ID.
    const ticks = new Set(all.map((id) => holder.decompose(id).time));
    expect(all.length / ticks.size).toBeGreaterThan(250);

    await holder.close();
    expect(await threads.after()).toEqual([
      'GeneratorClosedError',
      'GeneratorClosedError',
      'GeneratorClosedError',
      'GeneratorClosedError',
    ]);
    // The holder fenced the threads before recording, so the record covers every thread's last ID.
    const lastTick = holder.decompose(max(all)).time;
    const released = readJson(join(dir, `${claim.machineId}.claim`));
    expect(released.state).toBe('released');
    expect(released.recordedMs as number).toBeGreaterThanOrEqual(tickStartMs(layout, lastTick + 1) - 1);
  });

  it('4 threads x 250,000 IDs of a 1 ms, 12-bit-sequence layout (heavy contention): 0 duplicates, each thread increasing', async () => {
    const spec = { timeBits: 41, timeUnitMs: 1, sequenceBits: 12, machineBits: 10, epochMs: 1288834974657 };
    const shared = createSharedState(defineLayout(spec), 1);
    const threads = await draw(shared, 250_000, { layout: spec });
    const all = threads.ids.flat();
    expect(new Set(all).size).toBe(1_000_000);
    for (const ids of threads.ids) expect(increasing(ids)).toBe(true);
    expect(overlapping(threads.ids)).toBe(true);
    // Nobody holds a claim here: nothing fences them.
    expect(await threads.after()).toEqual(['issued', 'issued', 'issued', 'issued']);
  });

  it('4 threads x 50,000 Snowflake IDs under one host claim of a 10-bit machine ID: 0 duplicates, each thread increasing; closing the holder stops them', async () => {
    const dir = tempDir('threads-snowflake');
    const settings = { preset: 'discord' } as const;
    const claim = claimHostMachineId(10, { dir });
    const shared = createSharedState(snowflakeLayout(settings), claim);
    const holder = new Snowflake({ ...settings, machineId: claim, state: sharedStateCell(shared) });
    const threads = await draw(shared, 50_000, { snowflake: settings });
    const all = threads.ids.flat();
    expect(new Set(all).size).toBe(200_000);
    for (const ids of threads.ids) expect(increasing(ids)).toBe(true);
    expect(all.every((id) => holder.decompose(id).machine === claim.machineId)).toBe(true);
    expect(overlapping(threads.ids)).toBe(true);

    await holder.close();
    expect(await threads.after()).toEqual([
      'GeneratorClosedError',
      'GeneratorClosedError',
      'GeneratorClosedError',
      'GeneratorClosedError',
    ]);
    expect(readJson(join(dir, `${claim.machineId}.claim`)).state).toBe('released');
  });
});

describe('the default wall clock in worker threads', () => {
  it('wallClock and monotonicClock read the same time in every thread (to well under a 1 ms tick), so no thread runs a shared state ahead of the others', async () => {
    // Anchored on Date.now(), which is truncated to whole ms, each thread's clock was off by
    // its own 0-1 ms: 8 threads then spread over most of a snowflake tick.
    const offsets: { wall: number; monotonic: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const worker = new Worker(fixture('clock-worker.mjs'));
      offsets.push(
        await new Promise<{ wall: number; monotonic: number }>((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
      );
      await worker.terminate();
      // Starting the threads apart in time gives Date.now() different fractions of a ms to truncate.
      await new Promise((resolve) => setTimeout(resolve, 13));
    }
    const spread = (values: number[]) => Math.max(...values) - Math.min(...values);
    expect(spread(offsets.map((o) => o.wall))).toBeLessThan(0.1);
    expect(spread(offsets.map((o) => o.monotonic))).toBeLessThan(0.1);
  });
});
