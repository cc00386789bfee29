// One real ZooKeeper server: claims, recorded times, release, a full field, and nodes this
// package did not write.
import { checkGeneratorOptions, IdGenerator, MachineIdProviderError } from '@ids/engine';
import { hasZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  LeaseBitsMismatchError,
  LeaseCorruptClaimError,
  LeaseSpaceFullError,
  LeaseStoreRefusedError,
  RecordedTimeWait,
} from '../src/index.js';
import {
  claim,
  expectFullField,
  FAST_LEASE,
  failure,
  freshPath,
  layoutWith,
  zookeeperForSuite,
} from './helpers.js';

describe.skipIf(!hasZookeeper())('zookeeperMachineId on a real ZooKeeper', () => {
  const suite = zookeeperForSuite();

  it('claims an ID with an ephemeral node of its own session, issues, records the time, and frees the ID on release', async () => {
    const path = freshPath('one');
    const layout = layoutWith(4);
    const held = await claim(layout, { connect: suite.server.connect, path, ...FAST_LEASE });
    const node = await suite.admin.getData(`${path}/claims/${held.machineId}`);
    expect(node?.stat.owner).toBe(held.leaseId);
    expect(JSON.parse(node!.data)).toMatchObject({ pid: process.pid });
    const generator = new IdGenerator(checkGeneratorOptions({ layout, machineId: held }));
    await generator.nextId();
    const reached = Date.now() + 5;
    await held.record(reached);
    expect(Number((await suite.admin.getData(`${path}/times/${held.machineId}`))?.data)).toBe(reached);
    await generator.close();
    await held.release();
    expect(await suite.admin.exists(`${path}/claims/${held.machineId}`)).toBeUndefined();
  });

  it('the next holder of an ID starts after the time the previous one recorded', async () => {
    const path = freshPath('floor');
    // 300 ms ahead of the real clock: short enough to wait out here. A claim that took longer
    // than that to reach the record (a loaded machine) finds it already past and has nothing to
    // wait for; how long the wait is, and that it is said, is the injected-clock test's
    // (not-before.test.ts). What holds either way: the claim is handed out only past the record.
    const ahead = Date.now() + 300;
    await suite.admin.mkdirp(`${path}/times`);
    await suite.admin.create(`${path}/times/0`, String(ahead));
    const waits: unknown[] = [];
    const held = await claim(layoutWith(0), {
      connect: suite.server.connect,
      path,
      ...FAST_LEASE,
      onError: (e) => waits.push(e),
    });
    expect(held.notBefore).toBe(ahead);
    expect(Date.now()).toBeGreaterThan(ahead);
    for (const wait of waits) expect(wait).toBeInstanceOf(RecordedTimeWait);
    await held.release();
  });

  it('40 concurrent claims into a field of 64 get 40 distinct IDs', async () => {
    const path = freshPath('forty');
    const layout = layoutWith(6);
    const claims = await Promise.all(
      Array.from({ length: 40 }, () => claim(layout, { connect: suite.server.connect, path, ...FAST_LEASE })),
    );
    expect(new Set(claims.map((c) => c.machineId)).size).toBe(40);
    expect((await suite.admin.getChildren(`${path}/claims`))?.length).toBe(40);
    await Promise.all(claims.map((c) => c.release()));
    expect(await suite.admin.getChildren(`${path}/claims`)).toEqual([]);
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

  it('a full field is LeaseSpaceFullError', async () => {
    const path = freshPath('full');
    const cause = await expectFullField(
      (layout) => claim(layout, { connect: suite.server.connect, path, ...FAST_LEASE }),
      LeaseSpaceFullError,
    );
    expect(cause.message).toContain(`${path}/claims/`);
  });

  it('a claim node holding an ID past the field, a persistent claim, garbage data or a garbage time: typed errors, nothing overwritten', async () => {
    const wide = freshPath('wide');
    await suite.admin.mkdirp(`${wide}/claims/9`);
    const tooWide = await failure(
      claim(layoutWith(2), { connect: suite.server.connect, path: wide, ...FAST_LEASE, probes: 0 }),
    );
    expect(tooWide).toBeInstanceOf(MachineIdProviderError);
    expect(tooWide.cause).toBeInstanceOf(LeaseBitsMismatchError);

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
