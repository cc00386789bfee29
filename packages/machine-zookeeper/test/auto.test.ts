// The `auto` chain's ZooKeeper step (the CLI's --zookeeper): skipped without a connect string,
// used with one, and stopping the chain (not falling through to a host-derived ID) when the
// ZooKeeper asked for cannot be used.
import { freePort, hasZookeeper, startZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseStoreUnavailableError, ZookeeperOptionError, zookeeperAutoStep } from '../src/index.js';
import { freshPath } from './helpers.js';

describe('zookeeperAutoStep', () => {
  it('skipped when neither the option nor IDS_ZOOKEEPER_CONNECT is given', async () => {
    const step = zookeeperAutoStep();
    expect(step.name).toBe('zookeeper');
    expect(await step.run({ bits: 16, env: {} })).toEqual({
      outcome: 'skipped',
      detail: 'IDS_ZOOKEEPER_CONNECT is not set (and no ZooKeeper was given)',
    });
  });

  it('a bad connect string given is ZookeeperOptionError at once; one from the environment stops the chain', async () => {
    expect(() => zookeeperAutoStep({ connect: 'zk1' })).toThrow(ZookeeperOptionError);
    const answer = await zookeeperAutoStep().run({ bits: 16, env: { IDS_ZOOKEEPER_CONNECT: 'zk1:99999' } });
    expect(answer.outcome === 'failed' && answer.stop).toBeInstanceOf(ZookeeperOptionError);
  });

  it('a ZooKeeper that cannot be reached stops the chain with the typed error as its cause', async () => {
    const port = await freePort();
    const answer = await zookeeperAutoStep({ timeoutMs: 500 }).run({
      bits: 16,
      env: { IDS_ZOOKEEPER_CONNECT: `127.0.0.1:${port}` },
    });
    expect(answer.outcome).toBe('failed');
    expect(answer.outcome === 'failed' && answer.stop).toBeInstanceOf(LeaseStoreUnavailableError);
  });

  it.skipIf(!hasZookeeper())(
    'used with IDS_ZOOKEEPER_CONNECT: a held claim, named in the detail',
    async () => {
      const zk = await startZookeeper();
      try {
        const answer = await zookeeperAutoStep({
          path: freshPath('auto'),
          ttlSeconds: 2,
          fenceMarginMs: 500,
        }).run({
          bits: 10,
          env: { IDS_ZOOKEEPER_CONNECT: zk.connect },
        });
        expect(answer.outcome).toBe('used');
        if (answer.outcome !== 'used') return;
        expect(answer.detail).toMatch(new RegExp(`claimed machine ID \\d+ in ZooKeeper at ${zk.connect}`));
        expect(answer.machineId.machineId).toBeLessThan(1024);
        await answer.machineId.release();
      } finally {
        await zk.close();
      }
    },
  );
});
