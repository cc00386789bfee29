import { LeaseBitsMismatchError, LeaseSpaceFullError } from './errors.js';
import type { Attempt, LeaseStore } from './store.js';

/** What claiming asks of a store. */
export type ClaimingStore = Pick<LeaseStore, 'name' | 'where' | 'claimKey' | 'listTaken' | 'tryCreate'>;

function randomBelow(n: number): number {
  return Math.floor(Math.random() * n);
}

/** The free IDs in random order: a lazy shuffle for fields up to 2^20, random draws beyond. */
function* freeInRandomOrder(space: number, taken: Set<number>): Generator<number> {
  if (space <= 2 ** 20) {
    const free: number[] = [];
    for (let id = 0; id < space; id++) if (!taken.has(id)) free.push(id);
    for (let end = free.length; end > 0; end--) {
      const i = randomBelow(end);
      const id = free[i]!;
      free[i] = free[end - 1]!;
      yield id;
    }
    return;
  }
  // A field this wide is only dense if something is badly wrong; a few draws settle it.
  for (let tries = 0; tries < 256; tries++) {
    const id = randomBelow(space);
    if (!taken.has(id)) yield id;
  }
}

/**
 * Every ID with a claim in the store, refusing one that does not fit `bits`: another fleet with
 * a wider field shares the prefix, and claiming beside it would be claiming its IDs.
 */
export async function listTaken(store: ClaimingStore, bits: number): Promise<Set<number>> {
  const taken = await store.listTaken();
  for (const id of taken) {
    if (id >= 2 ** bits) {
      throw new LeaseBitsMismatchError(
        store.name,
        `${store.claimKey(id)} holds machine ID ${id}, which does not fit a ${bits}-bit machine field (0 to ${2 ** bits - 1}): another fleet with a wider field uses ${store.where}; give this one its own prefix`,
      );
    }
  }
  return taken;
}

/** How `allocate` looks for an ID. */
export interface AllocateOptions {
  /** The width of the machine field: IDs are 0 to 2^bits - 1. */
  readonly bits: number;
  /** Random IDs tried before listing. */
  readonly probes: number;
  /** Tried first (the ID held before a lost lease), when it fits. */
  readonly preferred?: number;
  /** The only ID to try (the user chose it): taken means LeaseSpaceFullError. */
  readonly only?: number;
  /** Called between round trips; throws to stop (the lease was lost meanwhile). */
  readonly stillValid: () => void;
}

/**
 * Finds a free ID and claims it under `leaseId`. A few random probes first: while the field is
 * sparse, one round trip is the common case. When they all hit taken IDs the field is dense,
 * and probing on would take ever more round trips (thousands near full), so it lists what is
 * taken and tries the free IDs in random order, which spreads concurrent claimers over
 * different IDs. Lists again if others took them all meanwhile.
 *
 * Each probe shows the store the probes still to come (`look`); a store that reads them in the
 * same request leaves only those it saw free, so a dense field costs one failed create and a
 * listing, not a create per probe (on etcd each is a write agreed and synced to disk).
 *
 * @throws LeaseSpaceFullError when every ID is held.
 */
export async function allocate(
  store: ClaimingStore,
  leaseId: string,
  options: AllocateOptions,
): Promise<{ id: number; attempt: Attempt & { held: true } }> {
  const space = 2 ** options.bits;
  const attempt = async (id: number, look?: readonly number[]) => {
    options.stillValid();
    return store.tryCreate(leaseId, id, look);
  };
  if (options.only !== undefined) {
    const result = await attempt(options.only);
    if (result.held) return { id: options.only, attempt: result };
    throw new LeaseSpaceFullError(
      store.name,
      `machine ID ${options.only} is held by another process (${store.claimKey(options.only)}); it is the only ID this claim may take`,
    );
  }
  // The preferred ID first, then distinct random ones.
  const drawn = new Set<number>();
  if (options.preferred !== undefined && options.preferred < space) drawn.add(options.preferred);
  const wanted = Math.min(drawn.size + options.probes, space);
  while (drawn.size < wanted) drawn.add(randomBelow(space));
  let probes = [...drawn];
  while (probes.length > 0) {
    const [id, ...rest] = probes as [number, ...number[]];
    const result = await attempt(id, rest);
    if (result.held) return { id, attempt: result };
    const free = result.free && new Set(result.free);
    probes = free ? rest.filter((next) => free.has(next)) : rest;
  }
  // Every listing that still shows free IDs, all taken by others before we got there, means
  // the field filled up meanwhile; a few rounds end either with an ID or with a full field.
  let free = 0;
  for (let round = 0; round < 8; round++) {
    options.stillValid();
    const taken = await listTaken(store, options.bits);
    free = 0;
    for (const id of freeInRandomOrder(space, taken)) {
      free++;
      const result = await attempt(id);
      if (result.held) return { id, attempt: result };
    }
    if (free === 0) break;
  }
  const field = `${space.toLocaleString('en-US')} IDs of the ${options.bits}-bit field under ${store.where}`;
  throw new LeaseSpaceFullError(
    store.name,
    free === 0
      ? `every machine ID is held: all ${field} have a live lease; widen the field or wait for a holder to leave`
      : `no machine ID could be claimed: of the ${field}, each one seen free was taken by another claimer first, 8 times over`,
  );
}
