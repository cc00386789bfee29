// The `auto` chain's ZooKeeper step (the CLI's --zookeeper): skipped without a connect string,
// used with one, and stopping the chain (not falling through to a host-derived ID) when the
// ZooKeeper asked for cannot be used.
import { InvalidArgumentError, NoMachineIdHereError } from '@ids/engine';
import { freePort, hasZookeeper, startZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { LeaseStoreUnavailableError, zookeeperAutoStep } from '../src/index.js';
import { freshPath } from './helpers.js';

const failure = (promise: unknown) => Promise.resolve(promise).catch((e: unknown) => e);

describe('zookeeperAutoStep', () => {
  it('skipped when neither the option nor IDS_ZOOKEEPER_CONNECT is given', async () => {
    const step = zookeeperAutoStep({ env: {} });
    expect(step.name).toBe('zookeeper');
    const answer = await failure(step.provider({ bits: 16 }));
    expect(answer).toBeInstanceOf(NoMachineIdHereError);
    expect(answer).toMatchObject({
      outcome: 'skipped',
      message: 'IDS_ZOOKEEPER_CONNECT is not set (and no ZooKeeper was given)',
    });
  });

  it('a bad connect string given is InvalidArgumentError at once; one from the environment stops the chain', async () => {
    expect(() => zookeeperAutoStep({ connect: 'zk1' })).toThrow(InvalidArgumentError);
    const answer = await failure(
      zookeeperAutoStep({ env: { IDS_ZOOKEEPER_CONNECT: 'zk1:99999' } }).provider({ bits: 16 }),
    );
    expect(answer).toBeInstanceOf(InvalidArgumentError);
  });

  it('a ZooKeeper that cannot be reached stops the chain with the typed error', async () => {
    const port = await freePort();
    const notes: string[] = [];
    const answer = await failure(
      zookeeperAutoStep({ timeoutMs: 500, env: { IDS_ZOOKEEPER_CONNECT: `127.0.0.1:${port}` } }).provider({
        bits: 16,
        note: (detail) => notes.push(detail),
      }),
    );
    expect(answer).toBeInstanceOf(LeaseStoreUnavailableError);
    expect(notes).toEqual([
      expect.stringMatching(
        new RegExp(`^could not claim a machine ID in ZooKeeper at 127\\.0\\.0\\.1:${port}: `),
      ),
    ]);
  });

  it.skipIf(!hasZookeeper())(
    'used with IDS_ZOOKEEPER_CONNECT: a held claim, named in the detail',
    async () => {
      const zk = await startZookeeper();
      try {
        const notes: string[] = [];
        const claim = await zookeeperAutoStep({
          path: freshPath('auto'),
          // A bound for a ZooKeeper just started on a loaded machine (its first session can take
          // seconds), not a rule under test.
          timeoutMs: 30_000,
          env: { IDS_ZOOKEEPER_CONNECT: zk.connect },
        }).provider({ bits: 10, note: (detail) => notes.push(detail) });
        expect(notes).toEqual([
          expect.stringMatching(new RegExp(`claimed machine ID \\d+ in ZooKeeper at ${zk.connect}`)),
        ]);
        if (typeof claim === 'number') throw new Error('expected a claim');
        expect(claim.machineId).toBeLessThan(1024);
        await claim.release();
      } finally {
        await zk.close();
      }
    },
  );
});
