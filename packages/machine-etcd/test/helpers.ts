import { type Layout, resolveMachineId } from '@ids/engine';
import { type EtcdCluster, hasEtcd, serverForSuite, startEtcd } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { type Issuer, spawnIssuer, uniqueName } from '../../machine-lease/test/kit.js';
import { type EtcdMachineIdOptions, etcdMachineId, type LeasedClaim } from '../src/index.js';

// Everything the suites share with the other lease stores' tests.
export * from '../../machine-lease/test/kit.js';

/** Whether this machine can run etcd servers itself (scripts/ensure-services.mjs installs one). */
export const canStartEtcd = hasEtcd();

const external = process.env.ETCD_ENDPOINTS?.split(',').map((s) => s.trim());

/**
 * A single etcd for tests that need nothing but a server: one started here, or, on a machine
 * without the binary, the one ETCD_ENDPOINTS names (then never stopped by us).
 */
export async function singleEtcd(): Promise<Pick<EtcdCluster, 'endpoints' | 'stop'>> {
  if (canStartEtcd) return startEtcd();
  if (external) return { endpoints: external, stop: async () => undefined };
  throw new Error(
    'no etcd for the tests: install etcd (node scripts/ensure-services.mjs does, as root on Debian/Ubuntu) or set ETCD_ENDPOINTS',
  );
}

/** singleEtcd() for the tests of the enclosing describe, with an admin client on it. */
export function etcdForSuite() {
  return serverForSuite(singleEtcd, {
    connect: (etcd) => adminClient(etcd.endpoints),
    stop: async (etcd, admin) => {
      admin?.close();
      await etcd.stop();
    },
  });
}

/** A prefix no other test (or run, against a shared etcd) uses. */
export function freshPrefix(name: string): string {
  return `/ids-test/${uniqueName(name)}`;
}

/** Runs the provider the way Sonyflake.create does (range check included) and returns the claim. */
export async function claim(layout: Layout, options: EtcdMachineIdOptions): Promise<LeasedClaim> {
  return (await resolveMachineId(layout, etcdMachineId(options))) as LeasedClaim;
}

/** A plain client for looking at and meddling with keys, as an operator with etcdctl would. */
export function adminClient(endpoints: string[]): Etcd3 {
  return new Etcd3({ hosts: endpoints });
}

/** How the issuer takes machine ID 0: Go's check, or a held claim of exactly that ID. */
export type IssuerMode = 'check' | 'fixed';

/** Starts an issuer of machine ID 0 (test/fixtures/issuer.mjs) on etcd under `prefix`. */
export function startIssuer(mode: IssuerMode, endpoints: string[], prefix: string): Issuer {
  return spawnIssuer(__dirname, [mode, endpoints.join(','), prefix]);
}
