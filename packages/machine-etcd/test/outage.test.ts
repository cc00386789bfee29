// etcd stopped mid-run, and a partition between one client and etcd: the generator fences
// within the TTL budget, and a second holder gets the ID only after the first has fenced.
import { checkGeneratorOptions, GeneratorClosedError, IdGenerator, MachineIdLostError } from '@ids/engine';
import { type ProxyMode, startEtcd, TcpProxy } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { etcdMachineId, type LeasedClaim, LeaseLostError, StoreUnavailableError } from '../src/index.js';
import {
  aborted,
  canStartEtcd,
  claim,
  cleanupAfterEach,
  failure,
  freshPrefix,
  layoutWith,
  MARGIN_MS,
  sleep,
  TTL_MS,
  timerRuns,
  FAST_LEASE as timing,
  until,
  WAIT_MS,
} from './helpers.js';

interface Issued {
  at: number;
  id: bigint;
}

/** Calls nextId() every 2 ms until stopped, noting when each ID came back and each refusal. */
function pump(gen: IdGenerator) {
  const issued: Issued[] = [];
  const refused: { at: number; error: unknown }[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      try {
        const id = await gen.nextId();
        issued.push({ at: performance.now(), id });
      } catch (error) {
        refused.push({ at: performance.now(), error });
      }
      await sleep(2);
    }
  })();
  return {
    issued,
    refused,
    async stop() {
      running = false;
      await done;
    },
  };
}

const cleanup = cleanupAfterEach();

describe.skipIf(!canStartEtcd)('etcd stopped mid-run', () => {
  it('fences within TTL minus the margin, refuses meanwhile, and resumes when etcd returns', async () => {
    const etcd = await startEtcd();
    cleanup.push(() => etcd.stop());
    const layout = layoutWith(10);
    const held = await claim(layout, { endpoints: etcd.endpoints, prefix: freshPrefix('outage'), ...timing });
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: held, onError: () => undefined }));
    cleanup.push(() => gen.close().catch(() => undefined));
    const load = pump(gen);
    await sleep(300);

    const stoppedAt = performance.now();
    // The budget: from the last confirmed keepalive (no later than the stop) to TTL - margin,
    // as this process's timers run (late, on a busy machine: the keeper's as much as this one).
    const budget = timerRuns(TTL_MS - MARGIN_MS);
    await etcd.members[0]!.stop();
    const fencedAt = await aborted(held.signal);
    expect(fencedAt).toBeLessThan((await budget) + 50);
    const reason = held.signal.reason as LeaseLostError;
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(['keepalive-failed', 'deadline']).toContain(reason.kind);
    await sleep(TTL_MS + 500); // down for longer than the TTL

    // From when the start began: the holder may claim and issue before start() has seen etcd ready.
    const restartedAt = performance.now();
    await etcd.members[0]!.start();
    const issuedBefore = load.issued.length;
    await until(() => load.issued.length > issuedBefore + 10, WAIT_MS, 'IDs after etcd returned');
    const resumedAt = load.issued[issuedBefore]!.at;
    await load.stop();

    // Nothing was issued between the fence and the return; calls were refused with MachineIdLostError.
    expect(load.issued.filter((i) => i.at > fencedAt && i.at < restartedAt)).toEqual([]);
    const refusals = load.refused.filter((r) => r.at > fencedAt && r.at < restartedAt);
    expect(refusals.length).toBeGreaterThan(0); // calls were made meanwhile (as often as a busy machine allows)
    for (const r of refusals) expect(r.error).toBeInstanceOf(MachineIdLostError);
    const ids = load.issued.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
    console.log(
      `etcd stop: fenced ${Math.round(fencedAt - stoppedAt)} ms after the stop (budget ${TTL_MS - MARGIN_MS} ms); resumed ${Math.round(resumedAt - restartedAt)} ms after etcd returned, as machine ${gen.machine} (was ${held.machineId})`,
    );
  });
});

describe.skipIf(!canStartEtcd)('closing while etcd is down', () => {
  it('close() during the renewal loop ends within the timeout, saying the lease could not be revoked', async () => {
    const etcd = await startEtcd();
    cleanup.push(() => etcd.stop());
    const layout = layoutWith(10);
    const held = await claim(layout, {
      endpoints: etcd.endpoints,
      prefix: freshPrefix('close-down'),
      ...timing,
    });
    const gen = new IdGenerator(checkGeneratorOptions({ layout, machineId: held, onError: () => undefined }));
    await gen.nextId();
    await etcd.members[0]!.stop();
    await aborted(held.signal);
    await sleep(300); // the generator is renewing meanwhile, and failing
    const budget = timerRuns(timing.timeoutMs * 2 + 500);
    const error = await failure(gen.close());
    expect(performance.now()).toBeLessThan(await budget);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toMatch(
      /^etcd: releasing machine ID \d+: the lease could not be revoked .* within 2 s/,
    );
    await expect(gen.nextId()).rejects.toBeInstanceOf(GeneratorClosedError);
  });
});

describe.skipIf(!canStartEtcd)('a partition between one client and etcd (a loopback TCP proxy, cut)', () => {
  it.each<ProxyMode>(['reset', 'blackhole'])(
    'cut by %s: the second holder gets the ID only after the first fenced; overlap 0',
    async (mode) => {
      const etcd = await startEtcd();
      cleanup.push(() => etcd.stop());
      const proxy = await TcpProxy.start(etcd.endpoints[0]!);
      cleanup.push(() => proxy.close());
      const prefix = freshPrefix(`partition-${mode}`);
      const layout = layoutWith(0); // a single machine ID: the second client can only have the first's

      // With a blackhole nothing ever answers; with a request timeout longer than the trust
      // window, only the deadline can end the wait.
      const a = await claim(layout, {
        endpoints: [proxy.url],
        prefix,
        ...timing,
        timeoutMs: mode === 'blackhole' ? 5000 : 1000,
      });
      const genA = new IdGenerator(checkGeneratorOptions({ layout, machineId: a, onError: () => undefined }));
      cleanup.push(async () => {
        proxy.setMode('pass');
        await genA.close().catch(() => undefined);
      });
      const loadA = pump(genA);
      await sleep(300);

      const cutAt = performance.now();
      const budget = timerRuns(TTL_MS - MARGIN_MS);
      proxy.setMode(mode);
      const fencedA = aborted(a.signal);

      // B keeps trying for the same (only) ID, directly.
      let b: LeasedClaim | undefined;
      const provider = etcdMachineId({ endpoints: etcd.endpoints, prefix, ...timing });
      while (!b) {
        b = (await Promise.resolve(provider({ bits: 0 })).catch(() => undefined)) as LeasedClaim | undefined;
        if (!b) await sleep(20);
        expect(performance.now() - cutAt).toBeLessThan(WAIT_MS);
      }
      const claimedB = performance.now();
      const genB = new IdGenerator(checkGeneratorOptions({ layout, machineId: b, onError: () => undefined }));
      cleanup.push(() => genB.close());
      const loadB = pump(genB);
      await sleep(300);
      const fencedAt = await fencedA;
      await loadA.stop();
      await loadB.stop();

      // The holding windows: A from its claim until it fenced, B from its claim on.
      const overlapMs = Math.max(0, fencedAt - claimedB);
      expect(overlapMs).toBe(0);
      // And in what was issued: A's last ID came back before B's first.
      const lastA = loadA.issued.at(-1)!;
      const firstB = loadB.issued[0]!;
      expect(lastA.at).toBeLessThan(firstB.at);
      expect(lastA.at).toBeLessThan(fencedAt + 1);
      // Same machine ID on both sides, so every ID differs only if the times never met.
      const all = [...loadA.issued, ...loadB.issued].map((i) => i.id);
      expect(new Set(all).size).toBe(all.length);
      expect(genA.decompose(lastA.id).machine).toBe(genB.decompose(firstB.id).machine);
      expect(firstB.id).toBeGreaterThan(lastA.id);
      const reason = a.signal.reason as LeaseLostError;
      if (mode === 'blackhole') {
        // The watchdog at the deadline, or the keepalive in flight, whose own time runs out there too.
        expect(['deadline', 'keepalive-failed']).toContain(reason.kind);
        expect(fencedAt).toBeLessThan((await budget) + 50);
      } else {
        // The connection is refused: the next keepalive fails, well before the deadline.
        expect(reason.kind).toBe('keepalive-failed');
      }
      console.log(
        `partition (${mode}): A fenced ${Math.round(fencedAt - cutAt)} ms after the cut (${reason.kind}); B claimed ${Math.round(claimedB - cutAt)} ms after the cut; gap ${Math.round(claimedB - fencedAt)} ms, overlap ${overlapMs} ms`,
      );
    },
  );
});
