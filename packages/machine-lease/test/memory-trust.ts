// What the tests on the in-memory store share: the lease timing they run with, and the check of
// every ID issued against the store's own truth at the instant it was issued.
import type { MemoryLeaseClient, MemoryLeaseServer } from './memory-store.js';

export const TTL_S = 3;
export const MARGIN_MS = 600;
export const TIMEOUT_MS = 2000;
/** TTL minus the margin: how long a confirmed keepalive is trusted from its sending. */
export const TRUST_MS = TTL_S * 1000 - MARGIN_MS;
/** The fake time one step of a test's run moves. */
export const STEP_MS = 5;

/**
 * What is wrong with ID `id`, issued at scheduler time `at` on `machine` by a process talking
 * through `client`: undefined when the store holds the machine ID for a lease granted through
 * that client with at least the fencing margin left, else a line saying what it found.
 */
export function violation(
  server: MemoryLeaseServer,
  client: MemoryLeaseClient | undefined,
  machine: number,
  id: bigint,
  at: number,
  start: number,
): string | undefined {
  const owner = server.owner(machine);
  const mine = owner !== undefined && client?.granted.has(owner);
  const left = owner === undefined ? -1 : server.expiresAt(owner) - at;
  if (mine && left >= MARGIN_MS) return undefined;
  return `ID ${id} at +${at - start} ms: machine ${machine} is ${owner === undefined ? 'held by nobody' : mine ? `ours with ${left} ms left` : `held by ${owner}`}`;
}
