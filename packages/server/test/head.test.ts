// HEAD on the routes that issue IDs, against the real bin: a HEAD must not change state, so it
// is answered GET's status and headers without taking an ID, a segment or a range of the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BinRun, call, scratch, startBin } from './helpers.js';

const ISSUING = ['/id', '/ids?count=5', '/api/segment/get/orders', '/api/segment/ids/orders?count=5'];

describe('HEAD on the routes that issue IDs (ids-server with 2 machines and segments on PGlite)', () => {
  let run: BinRun;
  let dir: string;
  const start = async () => {
    // Explicit machine IDs: no host claim to lose while PGlite's start-up holds the event loop.
    run = await startBin({ IDS_CLAIM_DIR: scratch(), IDS_MACHINE_ID: '5,6' }, [
      '--machines',
      '2',
      '--segment-store',
      `pglite:${dir}`,
      '--segment-tags',
      'orders,fresh',
    ]);
  };
  /** ids_issued_total over every slot. */
  const issued = async () => {
    const text = (await call(run.url, 'GET', '/metrics')).text;
    const counts = [...text.matchAll(/^ids_issued_total\{slot="\d+"\} (\d+)$/gm)].map((m) => Number(m[1]));
    expect(counts).toHaveLength(2);
    return counts.reduce((a, b) => a + b, 0);
  };
  const nextOrder = async () => BigInt((await call(run.url, 'GET', '/api/segment/get/orders')).json.id);

  beforeAll(async () => {
    dir = scratch();
    await start();
  });
  afterAll(async () => {
    await run?.stop();
  });

  it.each([
    ...ISSUING,
    '/ids?count=0',
    '/id?format=nope',
    '/api/segment/get/bad!tag',
    '/api/segment/ids/orders?count=0',
  ])('HEAD %s: the status and headers GET gives, no body', async (path) => {
    const get = await call(run.url, 'GET', path);
    const head = await call(run.url, 'HEAD', path);
    expect(head.status).toBe(get.status);
    expect(head.text).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['cache-control']).toBe('no-store');
  });

  it('200 concurrent HEADs issue nothing: the issued counter and the segment sequence go on from where they were', async () => {
    const order = await nextOrder();
    const before = await issued();
    const heads = await Promise.all(
      Array.from({ length: 200 }, (_, i) => call(run.url, 'HEAD', ISSUING[i % ISSUING.length] as string)),
    );
    for (const head of heads) {
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    }
    expect(await issued()).toBe(before);
    expect(await nextOrder()).toBe(order + 1n);
    // The counter does count what a GET issues.
    expect((await call(run.url, 'GET', '/ids?count=3')).json.ids).toHaveLength(3);
    expect(await issued()).toBe(before + 3);
  });

  it('HEAD on a tag not served yet takes no range of it from the store: after a restart it still starts at 1', async () => {
    const heads = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(run.url, 'HEAD', i % 2 ? '/api/segment/get/fresh' : '/api/segment/ids/fresh?count=2'),
      ),
    );
    expect(heads.map((h) => h.status)).toEqual(Array(20).fill(200));
    // A range a process took and did not use is gone with it: a restart would show one taken.
    expect(await run.stop()).toBe(0);
    await start();
    expect((await call(run.url, 'GET', '/api/segment/get/fresh')).json).toEqual({ id: '1' });
  });
});
