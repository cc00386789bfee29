import type { Connection } from './connection.js';
import { MachineBitsMismatchError, MachineIdSpaceFullError } from './errors.js';
import { type Keys, parseOwner, parseTime } from './keys.js';

/** Claim keys read per request while listing (etcd answers a few hundred KB at most). */
const PAGE = 1000;

/** What one create-if-absent attempt found. */
export type Attempt =
  | {
      readonly held: true;
      /** The time recorded for this ID by an earlier holder, if any. */
      readonly notBefore: number | undefined;
      /** The etcd revision the claim was seen at: a watch from the next one misses nothing. */
      readonly revision: string;
    }
  | { readonly held: false };

/** Where an attempt runs: one connection, one lease, one identity, one key layout. */
export interface ClaimContext {
  readonly conn: Connection;
  readonly keys: Keys;
  readonly owner: string;
  readonly leaseId: string;
}

/**
 * Creates `<prefix>/<id>` bound to the lease if no key is there, in one transaction that also
 * reads the recorded time (so a claim costs one round trip). A key that already carries our
 * lease is ours: a retried request whose first try committed but whose answer was lost.
 *
 * @throws CorruptClaimError when the key, or the recorded time of an ID we get, holds garbage.
 */
export async function tryCreate(ctx: ClaimContext, id: number): Promise<Attempt> {
  const { conn, keys } = ctx;
  const client = conn.client;
  const key = keys.claim(id);
  const timeKey = keys.time(id);
  const reply = await conn.call(`claiming ${key}`, (options) =>
    client
      .if(key, 'Create', '==', 0)
      .then(client.put(key).value(ctx.owner).lease(ctx.leaseId), client.get(timeKey))
      .else(client.get(key), client.get(timeKey))
      .options(options)
      .commit(),
  );
  const existing = reply.succeeded ? undefined : reply.responses[0]?.response_range.kvs[0];
  if (existing && existing.lease !== ctx.leaseId) {
    // Read it only to refuse garbage: a valid holder's identity is not otherwise needed here.
    parseOwner(key, existing.value);
    return { held: false };
  }
  const time = reply.responses[1]?.response_range.kvs[0];
  return {
    held: true,
    notBefore: time ? parseTime(timeKey, time.value) : undefined,
    revision: reply.header.revision,
  };
}

/**
 * Every ID held under the prefix, read page by page, keys only: which IDs are taken is all a
 * listing is for, and near a full field many claimers list at once. A value holding garbage is
 * reported by whichever probe or check reads it; a key name that is not `<prefix>/<id>` is
 * reported here.
 *
 * @throws CorruptClaimError for a key that is not `<prefix>/<id>`; MachineBitsMismatchError for
 * an ID that does not fit `bits`.
 */
export async function listTaken(
  ctx: Omit<ClaimContext, 'leaseId' | 'owner'>,
  bits: number,
): Promise<Set<number>> {
  const { conn, keys } = ctx;
  const taken = new Set<number>();
  let start = keys.claims.start;
  for (;;) {
    const from = start;
    const page = await conn.call(`listing the claims under ${keys.prefix}/`, (options) =>
      conn.client.kv.range(
        { key: Buffer.from(from), range_end: Buffer.from(keys.claims.end), limit: PAGE, keys_only: true },
        options,
      ),
    );
    for (const kv of page.kvs) {
      const key = kv.key.toString('utf8');
      const id = keys.idOf(key);
      if (id >= 2 ** bits) {
        throw new MachineBitsMismatchError(
          `${key} holds machine ID ${id}, which does not fit a ${bits}-bit machine field (0 to ${2 ** bits - 1}): another fleet with a wider field uses the prefix ${keys.prefix}; give this one its own prefix`,
        );
      }
      taken.add(id);
    }
    const last = page.kvs.at(-1);
    if (!page.more || !last) return taken;
    start = `${last.key.toString('utf8')}\0`;
  }
}

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

export interface AllocateOptions {
  readonly bits: number;
  /** Random IDs tried before listing. */
  readonly probes: number;
  /** Tried first (the ID held before a lost lease), when it fits. */
  readonly preferred?: number;
  /** Called between round trips; throws to stop (the lease was lost meanwhile). */
  readonly stillValid: () => void;
}

/**
 * Finds a free ID and claims it. A few random probes first: while the field is sparse, one
 * round trip is the common case. When they all hit taken IDs the field is dense, and probing on
 * would take ever more round trips (thousands near full), so it lists what is taken (one request
 * per 1,000 claims) and tries the free IDs in random order, which spreads concurrent claimers
 * over different IDs. Lists again if others took them all meanwhile.
 *
 * @throws MachineIdSpaceFullError when every ID is held.
 */
export async function allocate(
  ctx: ClaimContext,
  options: AllocateOptions,
): Promise<{ id: number; attempt: Attempt & { held: true } }> {
  const space = 2 ** options.bits;
  const tried = new Set<number>();
  const attempt = async (id: number) => {
    tried.add(id);
    options.stillValid();
    const result = await tryCreate(ctx, id);
    return result.held ? { id, attempt: result } : undefined;
  };
  if (options.preferred !== undefined && options.preferred < space) {
    const got = await attempt(options.preferred);
    if (got) return got;
  }
  for (let i = 0; i < options.probes && tried.size < space; i++) {
    let id = randomBelow(space);
    while (tried.has(id)) id = randomBelow(space);
    const got = await attempt(id);
    if (got) return got;
  }
  // Every listing that still shows free IDs, all taken by others before we got there, means
  // the field filled up meanwhile; a few rounds end either with an ID or with a full field.
  let free = 0;
  for (let round = 0; round < 8; round++) {
    options.stillValid();
    const taken = await listTaken(ctx, options.bits);
    free = 0;
    for (const id of freeInRandomOrder(space, taken)) {
      free++;
      const got = await attempt(id);
      if (got) return got;
    }
    if (free === 0) break;
  }
  const field = `${space.toLocaleString('en-US')} IDs of the ${options.bits}-bit field under ${ctx.keys.prefix}/`;
  throw new MachineIdSpaceFullError(
    free === 0
      ? `every machine ID is held: all ${field} have a live lease; widen the field or wait for a holder to leave`
      : `no machine ID could be claimed: of the ${field}, each one seen free was taken by another claimer first, 8 times over`,
  );
}
