// Two `ids-server --segment-store pglite:DIR` on one directory: the second refuses to start,
// naming the first; once the first is killed with -9, the next one starts and continues its IDs.
import { join } from 'node:path';
import { openSegmentStore } from '@ids/segment';
import { afterAll, describe, expect, it } from 'vitest';
import { type BinRun, call, scratch, startBin } from './helpers.js';

describe('one ids-server per PGlite directory', () => {
  const dir = join(scratch(), 'segments');
  const args = ['--segment-store', `pglite:${dir}`, '--segment-tags', 'orders'];
  const runs: BinRun[] = [];
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.stop('SIGKILL')));
  });

  it('the second exits 1 with ERR_IDS_HELD_FILE_IN_USE naming the first pid; after kill -9 of the first, the next serves on', async () => {
    const store = await openSegmentStore(`pglite:${dir}`); // the operator creates the tag first
    await store.createTag('orders', { after: 0n });
    await store.close(); // and so frees the directory for the server
    const first = await startBin({ IDS_CLAIM_DIR: scratch() }, args);
    runs.push(first);
    const before = await call(first.url, 'GET', '/api/segment/ids/orders?count=5');
    expect(before.json).toEqual({ ids: ['1', '2', '3', '4', '5'] });

    // Rejects when it exits before listening; should it listen instead, it is stopped after the test.
    const refused = await startBin({ IDS_CLAIM_DIR: scratch() }, args).then(
      (run) => {
        runs.push(run);
        return 'listening';
      },
      (error: Error) => error.message,
    );
    expect(refused).toMatch(
      new RegExp(
        `^ids-server exited with 1 before listening: ids-server: ERR_IDS_HELD_FILE_IN_USE: the PGlite directory ${dir} is in use by pid ${first.child.pid} on host \\S+ \\(held by pid ${first.child.pid}, which is running; lock file ${dir}/ids\\.lock\\)`,
      ),
    );
    // The first one never noticed: it still serves.
    expect((await call(first.url, 'GET', '/api/segment/get/orders')).json).toEqual({ id: '6' });

    await first.stop('SIGKILL');
    const next = await startBin({ IDS_CLAIM_DIR: scratch() }, args);
    runs.push(next);
    const after = await call(next.url, 'GET', '/api/segment/get/orders');
    // Above everything the killed server could have issued from its segment (step 1000).
    expect(BigInt(after.json.id)).toBeGreaterThan(6n);
    expect(await next.stop()).toBe(0);
  }, 180_000); // Three PGlite starts, the first creating the database: 20 s and more on a loaded machine.
});
