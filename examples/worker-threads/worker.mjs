// One worker thread of index.mjs: a Sonyflake over the shared state (so under the main thread's
// machine ID), which says it is ready, waits at the gate so every thread starts drawing at once,
// draws `count` IDs with nextIdSync() and posts them back.
import { parentPort, workerData } from 'node:worker_threads';
import { Sonyflake, sharedStateCell } from '@ids/sonyflake';

/** @type {{ shared: import('@ids/engine').SharedGeneratorState, gate: SharedArrayBuffer, count: number }} */
const { shared, gate, count } = workerData;
const cell = sharedStateCell(shared);
// The machine ID must be the shared state's: the cell refuses any other.
const sonyflake = new Sonyflake({ machineId: cell.machineId, state: cell });
const go = new Int32Array(gate);
parentPort?.postMessage('ready');
Atomics.wait(go, 0, 0);

// nextIdSync() blocks this thread (Atomics.wait, no spinning) when the 10 ms tick is used up;
// the main thread's event loop is not affected, so it keeps renewing the claim.
const ids = new BigUint64Array(count);
for (let i = 0; i < count; i++) ids[i] = sonyflake.nextIdSync();
parentPort?.postMessage(ids, [ids.buffer]);
