import { hasZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseCorruptClaimError, LeaseStoreRefusedError } from '../src/index.js';
import { claim, FAST_LEASE, failure, freshPath, layoutWith, zookeeperForSuite } from './helpers.js';

describe.skipIf(!hasZookeeper())('zookeeperMachineId on a real ZooKeeper', () => {
  const suite = zookeeperForSuite();

  it('claims an ID with an ephemeral node of its own session, and records the time under times/', async () => {
    const path = freshPath('one');
    const held = await claim(layoutWith(4), { connect: suite.server.connect, path, ...FAST_LEASE });
    const node = await suite.admin.getData(`${path}/claims/${held.machineId}`);
    expect(node?.stat.owner).toBe(held.leaseId);
    expect(JSON.parse(node!.data)).toMatchObject({ pid: process.pid });
    const reached = Date.now() + 5;
    await held.record(reached);
    expect(Number((await suite.admin.getData(`${path}/times/${held.machineId}`))?.data)).toBe(reached);
    await held.release();
  });

  it('a session timeout the server lowers to the fencing margin or under is LeaseStoreRefusedError, not a claim fenced at once', async () => {
    // The launcher's server grants at most 120 s; a 10 min session with a 2 min margin cannot work.
    const error = await failure(
      claim(layoutWith(1), {
        connect: suite.server.connect,
        path: freshPath('ceiling'),
        ttlSeconds: 600,
        fenceMarginMs: 120_000,
      }),
    );
    expect(error.cause).toBeInstanceOf(LeaseStoreRefusedError);
    expect((error.cause as LeaseStoreRefusedError).store).toBe('zookeeper');
    expect((error.cause as Error).message).toContain('granted a session timeout of 120000 ms');
  });

  it('a persistent claim, garbage data or a garbage time: typed errors, nothing overwritten', async () => {
    const persistent = freshPath('persistent');
    await suite.admin.mkdirp(`${persistent}/claims/0`);
    const p = await failure(
      claim(layoutWith(0), { connect: suite.server.connect, path: persistent, ...FAST_LEASE }),
    );
    expect(p.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((p.cause as LeaseCorruptClaimError).key).toBe(`${persistent}/claims/0`);

    const garbageClaim = freshPath('garbage-claim');
    await suite.admin.mkdirp(`${garbageClaim}/claims`);
    await suite.admin.create(`${garbageClaim}/claims/0`, 'not json', 'ephemeral');
    const g = await failure(
      claim(layoutWith(0), { connect: suite.server.connect, path: garbageClaim, ...FAST_LEASE }),
    );
    expect(g.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((g.cause as Error).message).toContain('"not json"');
    expect((await suite.admin.getData(`${garbageClaim}/claims/0`))?.data).toBe('not json');

    const garbageTime = freshPath('garbage-time');
    await suite.admin.mkdirp(`${garbageTime}/times`);
    await suite.admin.create(`${garbageTime}/times/0`, 'soon');
    const t = await failure(
      claim(layoutWith(0), { connect: suite.server.connect, path: garbageTime, ...FAST_LEASE }),
    );
    expect(t.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((t.cause as Error).message).toContain('"soon"');
    expect((await suite.admin.getData(`${garbageTime}/times/0`))?.data).toBe('soon');
    // The claim made before the time was read went with its session.
    expect(await suite.admin.getChildren(`${garbageTime}/claims`)).toEqual([]);

    const garbageName = freshPath('garbage-name');
    await suite.admin.mkdirp(`${garbageName}/claims/seven`);
    const n = await failure(
      claim(layoutWith(1), { connect: suite.server.connect, path: garbageName, ...FAST_LEASE, probes: 0 }),
    );
    expect(n.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect(await suite.admin.exists(`${garbageName}/claims/seven`)).toBeDefined();
  });
});
