// The renewal thread (see renewal.ts): renews every holding its process hands it, each on its own
// timer, with synchronous file calls (this thread has nothing else to do, and needs no help from
// libuv's pool, which the holder's thread may keep busy). It reports a file found lost, or a
// renewal that could not write, by message; a holding released meanwhile is dropped unrenewed.

import { type MessagePort, workerData } from 'node:worker_threads';
import { wallClock } from '@ids/engine';
import { nodeFileSystem, writeTempSync } from './files.js';
import { systemProcesses } from './process.js';
import { formatRecord } from './record.js';
import { type FromRenewer, Holding, type RenewalSpec, type ToRenewer, toWire } from './renewal.js';
import type { Context } from './takeover.js';

const port = (workerData as { port: MessagePort }).port;
const timers = new Map<number, ReturnType<typeof setInterval>>();

function post(message: FromRenewer): void {
  port.postMessage(message);
}

function drop(id: number): void {
  clearInterval(timers.get(id));
  timers.delete(id);
}

function renew(id: number, spec: RenewalSpec, holding: Holding, ctx: Context): void {
  if (!holding.held) {
    drop(id);
    return;
  }
  const recordedMs = holding.next(ctx.now(), spec.aheadMs);
  let temp: string;
  try {
    temp = writeTempSync(ctx.files, spec.path, formatRecord({ ...spec.mine, recordedMs }), spec.me);
  } catch (error) {
    post({ id, failed: toWire(error) });
    return;
  }
  // Posted before the holding is marked lost: the holder's thread, seeing it lost, finds why waiting.
  const outcome = holding.commit(ctx, spec, temp, recordedMs, (why) => post({ id, lost: why }));
  if (outcome?.kind === 'failed') post({ id, failed: toWire(outcome.error) });
  if (outcome === undefined || outcome.kind === 'lost') drop(id);
}

port.on('message', (message: ToRenewer) => {
  if ('remove' in message) {
    drop(message.remove);
    return;
  }
  const { id, buffer, ...spec } = message.add;
  const holding = new Holding(buffer);
  const ctx: Context = {
    files: nodeFileSystem,
    table: systemProcesses,
    me: spec.me,
    dir: spec.dir,
    now: () => wallClock.now(),
  };
  timers.set(
    id,
    setInterval(() => renew(id, spec, holding, ctx), spec.intervalMs),
  );
});
