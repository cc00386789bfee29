import { type Layout, resolveMachineId } from '@ids/engine';
import {
  type StartZookeeperOptions,
  serverForSuite,
  startZookeeper,
  type ZookeeperStandalone,
} from '@ids/test-services';
import { HOLDER_TTL_S, type Issuer, spawnIssuer, uniqueName } from '../../machine-lease/test/kit.js';
import { type LeasedClaim, type ZookeeperMachineIdOptions, zookeeperMachineId } from '../src/index.js';
import { ZkSession } from '../src/internal.js';

// Everything the suites share with the other lease stores' tests.
export * from '../../machine-lease/test/kit.js';

/** A base path no other test (or run, against a shared ZooKeeper) uses. */
export function freshPath(name: string): string {
  return `/ids-test/${uniqueName(name)}`;
}

/** Runs the provider the way Sonyflake.create does (range check included) and returns the claim. */
export async function claim(layout: Layout, options: ZookeeperMachineIdOptions): Promise<LeasedClaim> {
  return (await resolveMachineId(layout, zookeeperMachineId(options))) as LeasedClaim;
}

/** A session for looking at and meddling with nodes, as an operator with zkCli.sh would. */
export function adminSession(connect: string): Promise<ZkSession> {
  return ZkSession.open(connect, { sessionTimeoutMs: 30_000, timeoutMs: 10_000, feature: 'machine-id' });
}

/** Starts an issuer (test/fixtures/issuer.mjs) of a `bits`-bit field on `connect` under `path`, TTL HOLDER_TTL_S. */
export function startIssuer(connect: string, path: string, bits = 0): Issuer {
  return spawnIssuer(__dirname, [connect, path, HOLDER_TTL_S, bits]);
}

/**
 * A ZooKeeper of its own for a describe block, and an operator's session on it: started before
 * the block's tests, closed after them. Read `suite.server` and `suite.admin` inside the tests.
 */
export function zookeeperForSuite(options?: StartZookeeperOptions) {
  return serverForSuite(() => startZookeeper(options), {
    connect: (zk: ZookeeperStandalone) => adminSession(zk.connect),
    stop: async (zk, admin) => {
      await admin?.close();
      await zk.close();
    },
  });
}
