// The main job of `npm start`: choose a machine ID and say how, then issue a few Sonyflake IDs
// and show each one taken apart.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lower16BitPrivateIP } from '@ids/machine-ip';
import { Sonyflake } from '@ids/sonyflake';

/**
 * Which machine ID to use, and why: an explicit IDS_MACHINE_ID first, then Go's rule (the low
 * 16 bits of a private IPv4 address), then an ID kept in a file next to this example. The file
 * is created once, with a random ID, and then reused, so restarts keep their machine ID.
 * @returns {{ machineId: number, how: string }}
 */
export function chooseMachineId(
  env = process.env,
  keptFile = join(dirname(fileURLToPath(import.meta.url)), '.ids', 'machine-id'),
) {
  const explicit = env.IDS_MACHINE_ID;
  if (explicit !== undefined && explicit !== '') {
    if (!/^\d+$/.test(explicit) || Number(explicit) > 65535) {
      throw new Error(
        `IDS_MACHINE_ID: expected an integer from 0 to 65535, received ${JSON.stringify(explicit)}`,
      );
    }
    return { machineId: Number(explicit), how: 'IDS_MACHINE_ID from the environment' };
  }
  let ipFailure;
  try {
    return { machineId: lower16BitPrivateIP(), how: 'the low 16 bits of the private IPv4 address (Go rule)' };
  } catch (error) {
    ipFailure = error instanceof Error ? error.message.split(':')[0] : String(error);
  }
  try {
    const kept = readFileSync(keptFile, 'utf8').trim();
    if (!/^\d+$/.test(kept) || Number(kept) > 65535) {
      throw new Error(`${keptFile} holds ${JSON.stringify(kept)}, expected an integer from 0 to 65535`);
    }
    return { machineId: Number(kept), how: `${ipFailure}; kept in ${keptFile}` };
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'ENOENT') throw error;
  }
  const machineId = Math.floor(Math.random() * 65536);
  mkdirSync(dirname(keptFile), { recursive: true });
  writeFileSync(keptFile, `${machineId}\n`, { flag: 'wx' });
  return { machineId, how: `${ipFailure}; drew ${machineId} at random and kept it in ${keptFile}` };
}

export async function main(count = 5) {
  const { machineId, how } = chooseMachineId();
  console.log(`machine ID ${machineId}: ${how}`);
  const sonyflake = await Sonyflake.create({ machineId });
  const ids = await sonyflake.nextIds(count);
  console.log('');
  console.log('id                    time (start of its 10 ms tick)  sequence  machine');
  for (const id of ids) {
    const { sequence, machine } = sonyflake.decompose(id);
    console.log(
      `${id.toString().padEnd(21)} ${sonyflake.toTime(id).toISOString().padEnd(31)} ${String(sequence).padStart(8)}  ${machine}`,
    );
  }
  await sonyflake.close();
  return ids;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main();
}
