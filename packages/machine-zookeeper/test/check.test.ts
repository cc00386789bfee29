// Go's CheckMachineID on ZooKeeper: an ephemeral node per ID, gone with the check's session.
import { Sonyflake } from '@ids/sonyflake';
import { hasZookeeper, startZookeeper, type ZookeeperStandalone } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LeaseStoreUnavailableError,
  type ZkSession,
  ZookeeperOptionError,
  zookeeperCheckMachineId,
} from '../src/index.js';
import { adminSession, failure, freshPath } from './helpers.js';

describe.skipIf(!hasZookeeper())('zookeeperCheckMachineId', () => {
  let zk: ZookeeperStandalone;
  let admin: ZkSession;
  beforeAll(async () => {
    zk = await startZookeeper();
    admin = await adminSession(zk.connect);
  });
  afterAll(async () => {
    await admin?.close();
    await zk?.close();
  });

  it('true for the first asker of an ID, false for the next; close() frees the ID', async () => {
    const path = freshPath('check');
    const one = zookeeperCheckMachineId({ connect: zk.connect, path });
    const two = zookeeperCheckMachineId({ connect: zk.connect, path });
    expect(await Promise.all([one(7), two(7)]).then((r) => r.sort())).toEqual([false, true]);
    expect(await one(8)).toBe(true);
    const sonyflake = await Sonyflake.create({ machineId: 9, checkMachineId: one });
    expect((await admin.getData(`${path}/9`))?.stat.owner).toBeDefined();
    await sonyflake.close();
    await one.close();
    await two.close();
    expect(await admin.getChildren(path)).toEqual([]);
    const three = zookeeperCheckMachineId({ connect: zk.connect, path });
    expect(await three(7)).toBe(true);
    await three.close();
  });

  it('bad options throw at once; an absent server is a typed rejection', async () => {
    expect(() => zookeeperCheckMachineId({ connect: 'zk' })).toThrow(ZookeeperOptionError);
    expect(() => zookeeperCheckMachineId({ path: 'relative' })).toThrow(/path/);
    const check = zookeeperCheckMachineId({ connect: zk.connect, path: freshPath('check') });
    await expect(check(-1)).rejects.toThrow(/machine ID/);
    await check.close();
    await expect(check(1)).rejects.toThrow(ZookeeperOptionError);
    const nowhere = zookeeperCheckMachineId({ connect: '127.0.0.1:1', timeoutMs: 300 });
    expect(await failure(nowhere(1))).toBeInstanceOf(LeaseStoreUnavailableError);
    await nowhere.close();
  });
});
