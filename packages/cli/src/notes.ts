// One-line notes on stderr that tell a user what the output alone does not: how unique the
// machine ID is, and how long a run will take. Never on stdout, which carries only results.
// Prefixed `ids generate: note:` as every line of a command is (`ids decompose: note:`).
import type { Layout } from '@ids/engine';
import type { Io } from './io.js';
import { duration } from './progress.js';
import { int } from './table.js';

/**
 * When the machine ID is a host claim, says that it is unique on this host only, and how to
 * make it unique across hosts: several VMs without a private IPv4 all claim ID 0 otherwise.
 * `step` is the name of the step that chose the ID (any spelling of "host claim").
 */
export function noteHostClaim(io: Io, step: string, machineId: number): void {
  if (!/host.?claim/i.test(step)) return;
  io.stderr.write(
    `ids generate: note: machine ID ${machineId} is a host claim: unique on this host only. For IDs unique across hosts, give each host its own with --machine-id N or IDS_MACHINE_ID=N, or claim one in Redis (IDS_REDIS_URL) or ZooKeeper (IDS_ZOOKEEPER_CONNECT)\n`,
  );
}

/** The most IDs per second one machine ID can issue in a layout (2^sequence bits per tick). */
export function ceilingPerSecond(layout: Layout): number {
  return ((layout.maxSequence + 1) * 1000) / layout.timeUnitMs;
}

/** For a run that takes a second or more at the layout's ceiling, says so before it starts. */
export function noteDuration(io: Io, count: number, layout: Layout, label: string): void {
  const ceiling = ceilingPerSecond(layout);
  const seconds = count / ceiling;
  if (seconds < 1) return;
  io.stderr.write(
    `ids generate: note: ${int(count)} IDs take at least ${duration(seconds)} at the ${label} layout's ceiling of ${int(ceiling)} IDs/s per machine ID\n`,
  );
}
