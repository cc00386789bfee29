// Taking over a worker ID from Meituan Leaf's snowflake mode: a `forever` tree as Leaf writes it
// (one persistent sequential node `<ip>:<port>-<sequence>` per instance, JSON data with ip, port
// as a string, and the last reported timestamp), read back and its worker ID used.
import { InvalidArgumentError, MachineIdProviderError } from '@ids/engine';
import { hasZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import {
  LeaseBitsMismatchError,
  LeaseCorruptClaimError,
  LeaseSpaceFullError,
  leafForeverPath,
  readLeafWorker,
  ZookeeperLeafWorkerError,
  zookeeperMachineId,
} from '../src/index.js';
import type { ZkSession } from '../src/internal.js';
import {
  claim,
  FAST_LEASE,
  failure,
  freshPath,
  layoutWith,
  uniqueName,
  zookeeperForSuite,
} from './helpers.js';

/** Registers ip:port the way a Leaf instance does on first start; returns the node's path. */
function leafRegisters(
  admin: ZkSession,
  name: string,
  ip: string,
  port: number,
  timestamp: number,
): Promise<string> {
  const data = JSON.stringify({ ip, port: String(port), timestamp });
  return admin.create(`${leafForeverPath(name)}/${ip}:${port}-`, data, 'persistent-sequential');
}

describe.skipIf(!hasZookeeper())("Leaf's forever tree", () => {
  const suite = zookeeperForSuite();

  it("reads the worker ID Leaf gave ip:port and claims exactly it, issuing only after Leaf's last report", async () => {
    const name = uniqueName('leaf');
    await suite.admin.mkdirp(leafForeverPath(name));
    const reported = Date.now() + 200;
    await leafRegisters(suite.admin, name, '10.0.0.1', 8080, Date.now() - 60_000);
    await leafRegisters(suite.admin, name, '10.0.0.2', 8080, Date.now() - 60_000);
    const mine = await leafRegisters(suite.admin, name, '10.0.0.3', 8080, reported);
    expect(mine).toBe(`${leafForeverPath(name)}/10.0.0.3:8080-0000000002`);

    const worker = await readLeafWorker(suite.admin, { name, ip: '10.0.0.3', port: 8080 });
    expect(worker).toEqual({ workerId: 2, path: mine, timestamp: reported });

    const path = freshPath('leaf-claims');
    const leaf = { name, ip: '10.0.0.3', port: 8080 };
    const held = await claim(layoutWith(10), {
      connect: suite.server.connect,
      path,
      ...FAST_LEASE,
      leaf,
      onError: () => undefined,
    });
    expect(held.machineId).toBe(2);
    expect(held.notBefore).toBe(reported);
    // A second service pointed at the same ip:port does not get it while the first holds it.
    const second = await failure(
      claim(layoutWith(10), { connect: suite.server.connect, path, ...FAST_LEASE, leaf }),
    );
    expect(second).toBeInstanceOf(MachineIdProviderError);
    expect(second.cause).toBeInstanceOf(LeaseSpaceFullError);
    await held.release();
    // Leaf's tree is read, never written.
    expect(JSON.parse((await suite.admin.getData(mine))!.data).timestamp).toBe(reported);
  });

  it('no tree, no node for ip:port, a worker ID past the field, two nodes for one ip:port, garbage data: typed errors', async () => {
    const name = uniqueName('leaf-bad');
    const opts = (ip: string, port = 8080) => ({
      connect: suite.server.connect,
      path: freshPath('leaf-bad'),
      ...FAST_LEASE,
      leaf: { name, ip, port },
    });
    const noTree = await failure(claim(layoutWith(10), opts('10.0.0.1')));
    expect(noTree.cause).toBeInstanceOf(ZookeeperLeafWorkerError);
    expect((noTree.cause as Error).message).toContain(leafForeverPath(name));

    await suite.admin.mkdirp(leafForeverPath(name));
    await leafRegisters(suite.admin, name, '10.0.0.1', 8080, 1);
    await leafRegisters(suite.admin, name, '10.0.0.2', 8080, 1);
    const noNode = await failure(claim(layoutWith(10), opts('10.0.0.9')));
    expect(noNode.cause).toBeInstanceOf(ZookeeperLeafWorkerError);
    expect((noNode.cause as Error).message).toContain('10.0.0.9:8080');

    // Worker 1 does not fit a 0-bit field.
    const wide = await failure(claim(layoutWith(0), opts('10.0.0.2')));
    expect(wide.cause).toBeInstanceOf(LeaseBitsMismatchError);

    await leafRegisters(suite.admin, name, '10.0.0.2', 8080, 1);
    const twice = await failure(claim(layoutWith(10), opts('10.0.0.2')));
    expect(twice.cause).toBeInstanceOf(LeaseCorruptClaimError);

    const garbage = await suite.admin.create(
      `${leafForeverPath(name)}/10.0.0.5:9000-`,
      '{"ip":"10.0.0.5"}',
      'persistent-sequential',
    );
    const g = await failure(claim(layoutWith(10), opts('10.0.0.5', 9000)));
    expect(g.cause).toBeInstanceOf(LeaseCorruptClaimError);
    expect((g.cause as LeaseCorruptClaimError).key).toBe(garbage);
    expect((await suite.admin.getData(garbage))?.data).toBe('{"ip":"10.0.0.5"}');
  });

  it('leaf options are checked when the provider is made', () => {
    expect(() => zookeeperMachineId({ leaf: { name: 'a/b', ip: '10.0.0.1', port: 1 } })).toThrow(
      InvalidArgumentError,
    );
    expect(() => zookeeperMachineId({ leaf: { name: 'a', ip: '10.0.0.1', port: 0 } })).toThrow(/leaf.port/);
    expect(() => zookeeperMachineId({ leaf: { name: 'a', ip: 'ten-one', port: 1 } })).toThrow(/leaf.ip/);
  });
});
