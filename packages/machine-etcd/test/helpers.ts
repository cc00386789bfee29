import { spawnSync } from 'node:child_process';
import { defineLayout, IdGenerator, type Layout, type MachineIdClaim, resolveMachineId } from '@ids/engine';
import { Etcd3 } from 'etcd3';
import { type EtcdMachineIdClaim, type EtcdMachineIdOptions, etcdMachineId } from '../src/index.js';
import { type EtcdCluster, startEtcd } from '../src/testing.js';

/** Whether this machine can run etcd servers itself (scripts/ensure-services.mjs installs one). */
export const canStartEtcd = spawnSync(process.env.ETCD_BIN ?? 'etcd', ['--version']).status === 0;

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

let prefixes = 0;
/** A prefix no other test (or run, against a shared etcd) uses. */
export function freshPrefix(name: string): string {
  return `/ids-test/${name}-${process.pid}-${Date.now().toString(36)}-${prefixes++}`;
}

/** A sonyflake-like layout with the given machine bits. */
export function layoutWith(machineBits: number): Layout {
  return defineLayout({
    name: `test-${machineBits}`,
    timeBits: 39,
    timeUnitMs: 10,
    sequenceBits: 8,
    machineBits,
    epochMs: Date.UTC(2014, 8, 1),
  });
}

/** Runs the provider the way Sonyflake.create does (range check included) and returns the claim. */
export async function claim(layout: Layout, options: EtcdMachineIdOptions): Promise<EtcdMachineIdClaim> {
  return (await resolveMachineId(layout, etcdMachineId(options))) as EtcdMachineIdClaim;
}

export function generatorOn(
  layout: Layout,
  machineId: MachineIdClaim,
  extra: { onError?: (e: unknown) => void } = {},
) {
  return new IdGenerator({ layout, machineId, onError: extra.onError ?? (() => undefined) });
}

/** A plain client for looking at and meddling with keys, as an operator with etcdctl would. */
export function adminClient(endpoints: string[]): Etcd3 {
  return new Etcd3({ hosts: endpoints });
}

/** Resolves when `signal` aborts, with the time it did (performance.now()). */
export function aborted(signal: AbortSignal): Promise<number> {
  if (signal.aborted) return Promise.resolve(performance.now());
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `fn` every 10 ms until it returns true, failing after `ms`. */
export async function until(fn: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!(await fn())) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}
