// The order in which allocate asks a store for IDs, seen from a store that counts what it is
// asked: the real stores' own tests show the requests on a server (machine-etcd single.test.ts
// counts the transactions of a dense field); here the random draws are pinned so that each case
// knows which IDs the probes hit.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allocate, type ClaimingStore } from '../src/allocate.js';
import type { Attempt } from '../src/store.js';

/** A store whose claims are `taken`; `looks` says whether it answers which looked-at IDs are free. */
function countingStore(taken: Set<number>, looks: boolean) {
  const creates: { id: number; look: readonly number[] }[] = [];
  let listings = 0;
  const store: ClaimingStore = {
    name: 'memory',
    where: 'memory:',
    claimKey: (id) => `memory:${id}`,
    listTaken: async () => {
      listings++;
      return new Set(taken);
    },
    tryCreate: async (_lease, id, look = []): Promise<Attempt> => {
      creates.push({ id, look: [...look] });
      if (taken.has(id))
        return looks ? { held: false, free: look.filter((other) => !taken.has(other)) } : { held: false };
      taken.add(id);
      return { held: true, notBefore: undefined, revision: '1' };
    },
  };
  return { store, creates, listings: () => listings };
}

/** Pins Math.random so that the draws of a 64-ID field are `ids`, in order. */
function drawing(...ids: number[]) {
  const spy = vi.spyOn(Math, 'random');
  for (const id of ids) spy.mockReturnValueOnce((id + 0.5) / 64);
}

const options = { bits: 6, probes: 3, stillValid: () => undefined };
const allBut = (...free: number[]) => new Set([...Array(64).keys()].filter((id) => !free.includes(id)));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('allocate', () => {
  it('a dense field, on a store that looks: one failed create shows the other probes taken, then a listing and one create', async () => {
    drawing(10, 20, 30);
    const { store, creates, listings } = countingStore(allBut(41), true);
    const got = await allocate(store, 'lease', options);
    expect(got.id).toBe(41);
    expect(creates).toEqual([
      { id: 10, look: [20, 30] },
      { id: 41, look: [] },
    ]);
    expect(listings()).toBe(1);
  });

  it('a probe the store saw free is tried next, with no listing; probes seen taken are skipped', async () => {
    drawing(10, 20, 30);
    const { store, creates, listings } = countingStore(allBut(30), true);
    const got = await allocate(store, 'lease', options);
    expect(got.id).toBe(30);
    expect(creates.map((c) => c.id)).toEqual([10, 30]);
    expect(listings()).toBe(0);
  });

  it('the preferred ID goes first and shows the store the random probes', async () => {
    drawing(10, 20, 30);
    const { store, creates } = countingStore(allBut(20), true);
    const got = await allocate(store, 'lease', { ...options, preferred: 5 });
    expect(got.id).toBe(20);
    expect(creates).toEqual([
      { id: 5, look: [10, 20, 30] },
      { id: 20, look: [] }, // 30 was seen taken: not looked at again
    ]);
  });

  it('a store that does not look: every probe is a create, then the listing', async () => {
    drawing(10, 20, 30);
    const { store, creates, listings } = countingStore(allBut(41), false);
    const got = await allocate(store, 'lease', options);
    expect(got.id).toBe(41);
    expect(creates.map((c) => c.id)).toEqual([10, 20, 30, 41]);
    expect(listings()).toBe(1);
  });

  it('probes are distinct even when the draws repeat, and never more than the field holds', async () => {
    drawing(1, 1, 2, 1, 2, 3);
    const { store, creates } = countingStore(new Set([0, 1, 2, 3]), false);
    await expect(
      allocate(store, 'lease', { bits: 2, probes: 8, stillValid: () => undefined }),
    ).rejects.toMatchObject({
      code: 'ERR_IDS_LEASE_SPACE_FULL',
    });
    const probed = creates.map((c) => c.id);
    expect(new Set(probed).size).toBe(probed.length);
    expect(probed.length).toBe(4);
  });
});
