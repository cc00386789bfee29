// The zookeeper machine-ID source through the bin, against a real ZooKeeper on a free loopback
// port: each generator holds an ephemeral node of a session of its own.
import { hasZookeeper } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zookeeperForSuite } from '../../machine-zookeeper/test/helpers.js';
import { type BinRun, call, runBin, scratch, startBin } from './helpers.js';

const CLAIMS = '/ids/machine-id/claims';

describe.skipIf(!hasZookeeper())('ids-server --machine-id-source zookeeper', () => {
  const zk = zookeeperForSuite();
  let run: BinRun;
  const claimed = async () => ((await zk.admin.getChildren(CLAIMS)) ?? []).map(Number).sort((a, b) => a - b);

  beforeAll(async () => {
    run = await startBin({ IDS_CLAIM_DIR: scratch() }, [
      '--machine-id-source',
      'zookeeper',
      '--zookeeper',
      zk.server.connect,
      '--machines',
      '2',
    ]);
  });
  afterAll(async () => {
    await run?.stop();
  });

  it('--machines 2 holds two distinct IDs as ZooKeeper claims and serves IDs from them', async () => {
    const ready = await call(run.url, 'GET', '/health/ready');
    expect(ready.status, ready.text).toBe(200);
    const machines = ready.json.machines.map((m: { machineId: number }) => m.machineId) as number[];
    expect(new Set(machines).size).toBe(2);
    expect(
      run.out().match(/slot \d: claimed machine ID \d+ in ZooKeeper at 127\.0\.0\.1:\d+ /g),
    ).toHaveLength(2);
    expect(await claimed()).toEqual([...machines].sort((a, b) => a - b));
    const reply = await call(run.url, 'GET', '/ids?count=100');
    expect(reply.status).toBe(200);
    // Sonyflake's machine field is the low 16 bits: each ID comes from one of the claims.
    for (const id of reply.json.ids) expect(machines).toContain(Number(BigInt(id) & 0xffffn));
  });

  it('SIGTERM closes the sessions: no claim is left', async () => {
    expect(await run.stop()).toBe(0);
    expect(await claimed()).toEqual([]);
  });

  it('a connect string that is not host:port refuses to start, naming it', async () => {
    const bad = await runBin({ IDS_CLAIM_DIR: scratch() }, [
      '--machine-id-source',
      'zookeeper',
      '--zookeeper',
      'zk1',
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/ERR_IDS_INVALID_ARGUMENT: IDS_ZOOKEEPER_CONNECT: expected host:port/);
  });
});
