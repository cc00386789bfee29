// Go's CheckMachineID on ZooKeeper: an ephemeral node per ID, gone with the check's session.
import { InvalidArgumentError } from '@ids/engine';
import { Sonyflake } from '@ids/sonyflake';
import { hasZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError, zookeeperCheckMachineId } from '../src/index.js';
import { failure, freshPath, zookeeperForSuite } from './helpers.js';

describe.skipIf(!hasZookeeper())('zookeeperCheckMachineId', () => {
  const suite = zookeeperForSuite();

  it('true for the first asker of an ID, false for the next; close() frees the ID', async () => {
    const path = freshPath('check');
    const one = zookeeperCheckMachineId({ connect: suite.server.connect, path });
    const two = zookeeperCheckMachineId({ connect: suite.server.connect, path });
    expect(await Promise.all([one(7), two(7)]).then((r) => r.sort())).toEqual([false, true]);
    expect(await one(8)).toBe(true);
    const sonyflake = await Sonyflake.create({ machineId: 9, checkMachineId: one });
    expect((await suite.admin.getData(`${path}/9`))?.stat.owner).toBeDefined();
    await sonyflake.close();
    await one.close();
    await two.close();
    expect(await suite.admin.getChildren(path)).toEqual([]);
    const three = zookeeperCheckMachineId({ connect: suite.server.connect, path });
    expect(await three(7)).toBe(true);
    await three.close();
  });

  it('bad options throw at once; an absent server is a typed rejection', async () => {
    expect(() => zookeeperCheckMachineId({ connect: 'zk' })).toThrow(InvalidArgumentError);
    expect(() => zookeeperCheckMachineId({ path: 'relative' })).toThrow(/path/);
    const check = zookeeperCheckMachineId({ connect: suite.server.connect, path: freshPath('check') });
    await expect(check(-1)).rejects.toThrow(/machine ID/);
    await check.close();
    await expect(check(1)).rejects.toThrow(InvalidArgumentError);
    const nowhere = zookeeperCheckMachineId({ connect: '127.0.0.1:1', timeoutMs: 300 });
    expect(await failure(nowhere(1))).toBeInstanceOf(StoreUnavailableError);
    await nowhere.close();
  });
});
