// One node:cluster worker of index.mjs. It takes a machine ID of its own from a host claim in
// IDS_CLAIM_DIR (the lowest ID no live process of this host holds there), tells the primary
// which and how, issues IDS_COUNT Sonyflake IDs and sends them. It keeps the claim until the
// primary says 'close' (so the primary sees all workers holding theirs at once), then closes the
// generator, which records the time reached and releases the claim, and exits.
import cluster from 'node:cluster';
import { claimHostMachineId } from '@ids/machine-file';
import { Sonyflake } from '@ids/sonyflake';

/** @param {object} message */
const send = (message) =>
  /** @type {NodeJS.Process & { send(m: object): boolean }} */ (process).send(message);

try {
  // Not autoMachineId: on a host with a private IPv4 its chain gives every worker the same ID
  // (the address's), and the second worker would fail with HeldFileInUseError. See README.md.
  const claim = claimHostMachineId(16, { dir: process.env.IDS_CLAIM_DIR });
  const sonyflake = new Sonyflake({ machineId: claim });
  send({ type: 'claimed', machineId: claim.machineId, trail: claim.describe() });
  process.on('message', async (message) => {
    if (message !== 'close') return;
    await sonyflake.close();
    // Leaves the primary's IPC channel; with nothing else to do, the worker then exits (code 0).
    cluster.worker?.disconnect();
  });
  const ids = await sonyflake.nextIds(Number(process.env.IDS_COUNT));
  // BigInt arrays pass as they are: the primary sets up the channel with 'advanced' serialization.
  send({ type: 'ids', ids: BigUint64Array.from(ids) });
} catch (error) {
  const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
  send({ type: 'failed', error: `${name}: ${message}` });
  process.exitCode = 1;
  cluster.worker?.disconnect();
}
