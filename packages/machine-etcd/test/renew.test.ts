// The renewal loop on an injected clock, against a real etcd that goes away and comes back:
// keepalives, the fence and the pauses between renewal attempts all run on fake time, while
// the requests themselves are real.
import { checkGeneratorOptions, IdGenerator, MachineIdLostError } from '@ids/engine';
import { startEtcd } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { FakeScheduler } from '../../machine-lease/test/fake-scheduler.js';
import { etcdMachineId, type LeaseLostError } from '../src/index.js';
import { canStartEtcd, freshPrefix, layoutWith, sleep, until } from './helpers.js';

describe.skipIf(!canStartEtcd)('renewal, on an injected clock', () => {
  it('fences at the first failed keepalive, retries 100, 200, 400 ... 2,000 ms apart, and resumes the same ID', async () => {
    const etcd = await startEtcd();
    try {
      const scheduler = new FakeScheduler();
      const layout = layoutWith(10);
      const provider = etcdMachineId({
        endpoints: etcd.endpoints,
        prefix: freshPrefix('renew'),
        ttlSeconds: 10,
        fenceMarginMs: 2000,
        keepaliveIntervalMs: 1000,
        timeoutMs: 1000,
        scheduler,
      } as Parameters<typeof etcdMachineId>[0]);
      const claim = await provider({ bits: 10 });
      const gen = new IdGenerator(
        checkGeneratorOptions({ layout, machineId: claim, onError: () => undefined }),
      );
      await gen.nextId();

      // Confirmed keepalives every 1,000 ms of fake time: no fence over three TTLs of it.
      for (let i = 0; i < 30; i++) {
        await scheduler.advance(1000);
        await sleep(5); // the keepalive is a real request
      }
      expect(claim.signal.aborted).toBe(false);

      await etcd.members[0]!.stop();
      scheduler.requested.length = 0;
      await scheduler.advance(1000); // the next beat
      await until(() => claim.signal.aborted, 5000, 'the fence');
      expect((claim.signal.reason as LeaseLostError).kind).toBe('keepalive-failed');
      await expect(gen.nextId()).rejects.toBeInstanceOf(MachineIdLostError);

      // The generator asked for renewal; each failed attempt waits on the fake clock.
      const pauses: number[] = [];
      for (let i = 0; i < 7; i++) {
        await until(() => scheduler.pending > 0, 5000, `renewal pause ${i + 1}`);
        const [pause] = scheduler.pendingDurations;
        pauses.push(pause!);
        await scheduler.advance(pause!);
      }
      expect(pauses).toEqual([100, 200, 400, 800, 1600, 2000, 2000]);

      await etcd.members[0]!.start();
      let resumed = 0n;
      await until(
        async () => {
          if (scheduler.pending > 0) await scheduler.advance(scheduler.pendingDurations[0]!);
          resumed = await gen.nextId().catch(() => 0n);
          return resumed > 0n;
        },
        15_000,
        'IDs again after etcd returned',
      );
      // etcd kept the lease across its restart, so the same ID carries on.
      expect(gen.machine).toBe(claim.machineId);
      await gen.close();
    } finally {
      await etcd.stop();
    }
  });
});
