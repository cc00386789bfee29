// One member of the fleet: claims a machine ID from Redis (waiting while every ID is held),
// issues IDs, prints them as one JSON line, and closes, which records the time it reached and
// frees the ID at once.
import { LeaseSpaceFullError, redisMachineId } from '@ids/machine-redis';
import { MachineIdProviderError, Sonyflake } from '@ids/sonyflake';
import { settingsFor } from './settings.mjs';

const [url, prefix, bits, count, skew] = process.argv.slice(2);
// This "host's" clock runs `skew` ms behind the others (hosts' clocks never quite agree).
const clock = { now: () => Date.now() + Number(skew) };
// A short TTL: the first claim of each ID in a fresh Redis waits one TTL (its past is unknown).
const provider = redisMachineId({ url, prefix, ttlSeconds: 2, fenceMarginMs: 500 });

async function join() {
  for (;;) {
    try {
      return await Sonyflake.create({ machineId: provider, clock, ...settingsFor(Number(bits)) });
    } catch (error) {
      const cause = error instanceof MachineIdProviderError ? error.cause : undefined;
      // A full field frees up as others leave; anything else is a real failure.
      if (!(cause instanceof LeaseSpaceFullError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

const sonyflake = await join();
// The true time (not this host's skewed clock), so the checker can order the holders of an ID.
const claimedAt = Date.now();
const ids = await sonyflake.nextIds(Number(count));
await sonyflake.close();
process.stdout.write(
  `${JSON.stringify({ pid: process.pid, machineId: sonyflake.machine, claimedAt, ids: ids.map(String) })}\n`,
);
