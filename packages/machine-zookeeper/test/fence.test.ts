// When a claim stops trusting its session, on this process's (injected) clock: the session
// timeout minus the margin after the last confirmed keepalive, with ZooKeeper unreachable; and
// at once when an operator deletes the claim node.
import { MachineIdLostError } from '@ids/engine';
import { hasZookeeper, TcpProxy } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { FakeScheduler } from '../../machine-lease/test/fake-scheduler.js';
import { type LeaseLostError, zookeeperMachineId } from '../src/index.js';
import {
  claim,
  cleanupAfterEach,
  FAST_LEASE,
  failure,
  freshPath,
  generatorOn,
  layoutWith,
  MARGIN_MS,
  TTL_MS,
  until,
  WAIT_MS,
  zookeeperForSuite,
} from './helpers.js';

const cleanup = cleanupAfterEach();

describe.skipIf(!hasZookeeper())('fencing a ZooKeeper claim', () => {
  const suite = zookeeperForSuite();

  it('cut off from ZooKeeper, the claim is trusted until the session timeout minus the margin after its grant, to the millisecond of its clock', async () => {
    const proxy = await TcpProxy.start(suite.server.connect);
    cleanup.push(() => proxy.close());
    const scheduler = new FakeScheduler();
    const provider = zookeeperMachineId({
      connect: `127.0.0.1:${new URL(proxy.url).port}`,
      path: freshPath('fence'),
      ...FAST_LEASE,
      scheduler,
    } as never);
    const held = await provider({ bits: 2 });
    cleanup.push(() => held.release().catch(() => undefined));
    const grantedAt = scheduler.now();
    proxy.setMode('blackhole');
    // Keepalives fall due and go unanswered; until the deadline the claim still issues.
    await scheduler.advance(TTL_MS - MARGIN_MS - 1);
    expect(held.signal.aborted).toBe(false);
    expect(held.trustedForMs()).toBe(1);
    await scheduler.advance(1);
    expect(scheduler.now()).toBe(grantedAt + TTL_MS - MARGIN_MS);
    expect(held.signal.aborted).toBe(true);
    expect((held.signal.reason as LeaseLostError).kind).toBe('deadline');
    expect(held.trustedForMs()).toBe(0);
  });

  it('an operator deleting the claim node fences the generator at once', async () => {
    const layout = layoutWith(3);
    const held = await claim(layout, {
      connect: suite.server.connect,
      path: freshPath('deleted'),
      ...FAST_LEASE,
    });
    const generator = generatorOn(layout, held);
    cleanup.push(() => generator.close());
    await generator.nextId();
    // Asked the moment the claim is fenced: the generator renews by itself, and a new claim
    // can be made within a few ms (sooner than a poll would notice the abort).
    const refusal = new Promise<Error>((resolve) =>
      held.signal.addEventListener('abort', () => void failure(generator.nextId()).then(resolve), {
        once: true,
      }),
    );
    await suite.admin.remove(held.key, -1);
    await until(() => held.signal.aborted, WAIT_MS, 'the claim to be fenced');
    expect((held.signal.reason as LeaseLostError).kind).toBe('key-lost');
    expect(await refusal).toBeInstanceOf(MachineIdLostError);
  });
});
