// A three-member etcd cluster on loopback: members die (the leader among them) while a
// generator issues IDs and other claimers come and go.
import { checkGeneratorOptions, IdGenerator } from '@ids/engine';
import { serverForSuite, startEtcd } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import type { LeasedClaim } from '../src/index.js';
import { canStartEtcd, claim, freshPrefix, layoutWith, sleep, until, WAIT_MS } from './helpers.js';

describe.skipIf(!canStartEtcd)('a three-member cluster', () => {
  const etcd = serverForSuite(() => startEtcd({ size: 3 }), { stop: (cluster) => cluster.stop() });

  it('kill the leader, bring it back, kill the new leader: claims and generation go on', async () => {
    const layout = layoutWith(10);
    const prefix = freshPrefix('cluster');
    const options = {
      endpoints: etcd.server.endpoints,
      prefix,
      ttlSeconds: 2,
      fenceMarginMs: 500,
      timeoutMs: 1000,
    };
    const held = await claim(layout, options);
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: held, onError: () => undefined }));

    const issued: { at: number; id: bigint }[] = [];
    const claims: { at: number; id: number }[] = [];
    let running = true;
    const generating = (async () => {
      while (running) {
        const id = await gen.nextId().catch(() => undefined);
        if (id !== undefined) issued.push({ at: performance.now(), id });
        await sleep(2);
      }
    })();
    // Other processes joining and leaving all along; those that hold an ID at once must differ.
    const live = new Map<number, LeasedClaim>();
    const claiming = (async () => {
      while (running) {
        const c = await claim(layout, options).catch(() => undefined);
        if (c) {
          expect(live.has(c.machineId)).toBe(false);
          expect(c.machineId).not.toBe(gen.machine);
          live.set(c.machineId, c);
          claims.push({ at: performance.now(), id: c.machineId });
          if (live.size > 5) {
            const [id, oldest] = live.entries().next().value!;
            live.delete(id);
            await oldest.release().catch(() => undefined);
          }
        }
        await sleep(50);
      }
    })();

    // After each event generation and claims must go on. The sleeps are the least time each
    // state lasts (a member down past the TTL); then wait until both have gone on, for as long
    // as a busy machine takes to elect a leader and renew, not for a fixed time.
    const events: string[] = [];
    const goesOn = async (what: string, at: number) => {
      events.push(what);
      const after = (list: { at: number }[]) => list.filter((x) => x.at > at).length;
      await until(() => after(issued) > 50 && after(claims) > 3, WAIT_MS, `IDs and claims after "${what}"`);
    };
    await goesOn('the start', performance.now());
    const first = await etcd.server.leader();
    let at = performance.now();
    await first.kill();
    await sleep(2500);
    await goesOn(`killed leader ${first.name}`, at);
    at = performance.now();
    await first.start();
    await sleep(1000);
    await goesOn(`restarted ${first.name}`, at);
    const second = await etcd.server.leader();
    at = performance.now();
    await second.kill();
    await sleep(2500);
    await goesOn(`killed leader ${second.name}`, at);
    running = false;
    await Promise.all([generating, claiming]);

    let longestGap = 0;
    for (let i = 1; i < issued.length; i++)
      longestGap = Math.max(longestGap, issued[i]!.at - issued[i - 1]!.at);
    const ids = issued.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
    console.log(
      `cluster: ${issued.length} IDs and ${claims.length} claims across ${events.join(', ')}; longest pause in generation ${Math.round(longestGap)} ms`,
    );

    await Promise.all([...live.values()].map((c) => c.release()));
    await first.start().catch(() => undefined);
    await second.start();
    await gen.close();
  });
});
