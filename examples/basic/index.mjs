// The main job of `npm start`: choose a machine ID with the `auto` chain of @ids/machine-file
// (explicit ID -> private IPv4 -> host claim), say which step gave it and why the earlier ones
// did not, then issue a few Sonyflake IDs and show each one taken apart.
import { fileURLToPath } from 'node:url';
import { autoMachineId } from '@ids/machine-file';
import { Sonyflake } from '@ids/sonyflake';

/**
 * @param {{ count?: number, env?: Record<string, string | undefined>, interfaces?: import('@ids/machine-ip').InterfaceSource }} [options]
 *   `env` is where IDS_MACHINE_ID and IDS_CLAIM_DIR are read; `interfaces` replaces the host's
 *   interface list (tests use both).
 */
export async function main({ count = 5, env = process.env, interfaces } = {}) {
  // Set by `onChosen` before create() resolves.
  /** @type {import('@ids/machine-file').AutoMachineId} */
  let auto = /** @type {never} */ (undefined);
  const sonyflake = await Sonyflake.create({
    machineId: autoMachineId({
      env,
      interfaces,
      onChosen: (chosen) => {
        auto = chosen;
        console.log(`machine ID ${chosen.id}, from the ${chosen.step} step:`);
        for (const line of chosen.explain().split('\n')) console.log(`  ${line}`);
      },
    }),
  });
  try {
    const ids = await sonyflake.nextIds(count);
    console.log('');
    console.log('id                    time (start of its 10 ms tick)  sequence  machine');
    for (const id of ids) {
      const { sequence, machine } = sonyflake.decompose(id);
      console.log(
        `${id.toString().padEnd(21)} ${sonyflake.toTime(id).toISOString().padEnd(31)} ${String(sequence).padStart(8)}  ${machine}`,
      );
    }
    return { ids, auto };
  } finally {
    // Records the last tick used on a host claim and releases it, so the next run can take it.
    await sonyflake.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await main();
  } catch (error) {
    // The chain's own error (why no step gave an ID) is the cause of the generator's
    // MachineIdProviderError: it is the one that says what to fix.
    const shown = error instanceof Error && error.name === 'MachineIdProviderError' ? error.cause : error;
    console.error(shown instanceof Error ? `${shown.name}: ${shown.message}` : shown);
    process.exitCode = 1;
  }
}
