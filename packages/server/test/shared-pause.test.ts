// A process holding four machine IDs on one shared lease (the whole 2-bit field), SIGSTOPped
// past the TTL against a real etcd, Redis and ZooKeeper: another process then claims all four
// and issues, and the paused one issues nothing after it resumes. Every ID of both is compared.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasEtcd, hasRedis, hasZookeeper } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { etcdForSuite } from '../../machine-etcd/test/helpers.js';
import { type Issuer, spawnIssuer } from '../../machine-lease/test/kit.js';
import { redisForSuite } from '../../machine-redis/test/helpers.js';
import { zookeeperForSuite } from '../../machine-zookeeper/test/helpers.js';

const TEST_DIR = dirname(fileURLToPath(import.meta.url));
const WAIT_MS = 45_000;

/** The shared-lease issuer (fixtures/shared-issuer.mjs), through the lease stores' own spawner. */
const startIssuer = (store: string, where: string, prefix: string): Issuer =>
  spawnIssuer(TEST_DIR, [store, where, prefix], undefined, 'shared-issuer.mjs');

async function until(test: () => boolean, ms: number, what: string, issuers: Issuer[]): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) {
      throw new Error(
        `waited ${ms} ms for ${what}; stderr:\n${issuers.map((i) => i.stderr()).join('\n---\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function pauseAndHandOver(store: string, where: string, prefix: string): Promise<void> {
  const a = startIssuer(store, where, prefix);
  let b: Issuer | undefined;
  try {
    await until(() => a.ids.length > 200, WAIT_MS, 'A issuing from its four claims', [a]);
    // Only now: started together, each could hold part of the field and wait for the rest.
    b = startIssuer(store, where, prefix);
    const waiter = b;
    await until(() => waiter.waitingAt !== undefined, WAIT_MS, 'B refused (the field is full)', [a, b]);
    expect(b.claimedAt).toBeUndefined();
    a.child.kill('SIGSTOP');
    const cutAt = Date.now();
    await until(() => waiter.ids.length > 200, WAIT_MS, 'B issuing after A was paused', [a, b]);
    a.child.kill('SIGCONT');
    const resumedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await Promise.all([a.stop(), b.stop()]);
    const firstB = Math.min(...b.ids.map((x) => x.at));
    const machinesA = new Set(a.ids.map((x) => Number(x.id & 3n)));
    expect(machinesA).toEqual(new Set([0, 1, 2, 3]));
    expect(new Set(b.ids.map((x) => Number(x.id & 3n)))).toEqual(new Set([0, 1, 2, 3]));
    expect(
      a.ids.filter((x) => x.at >= firstB),
      'A issued once B did',
    ).toEqual([]);
    expect(
      a.ids.filter((x) => x.at >= resumedAt),
      'A issued after resuming',
    ).toEqual([]);
    expect([...a.late, ...b.late]).toEqual([]);
    const all = [...a.ids, ...b.ids].map((x) => x.id);
    expect(all.length - new Set(all).size, 'duplicates').toBe(0);
    console.log(
      `${store}: A issued ${a.ids.length} IDs on 4 claims, the last ${Math.max(...a.ids.map((x) => x.at)) - cutAt} ms after the pause; B issued from ${firstB - cutAt} ms on, ${b.ids.length} IDs; duplicates 0`,
    );
  } finally {
    await Promise.all([a.stop(), b?.stop()]).catch(() => undefined);
  }
}

let prefixes = 0;
const prefix = (store: string) => `ids-shared-${store}-${process.pid}-${prefixes++}`;

describe.skipIf(!hasEtcd())('four claims on one etcd lease, paused past the TTL', () => {
  const etcd = etcdForSuite();
  it('another process claims all four and issues; the paused one issues nothing after resuming', async () => {
    await pauseAndHandOver('etcd', etcd.server.endpoints.join(','), `/${prefix('etcd')}`);
  }, 120_000);
});

describe.skipIf(!hasRedis())('four claims on one Redis token, paused past the TTL', () => {
  const redis = redisForSuite();
  it('another process claims all four and issues; the paused one issues nothing after resuming', async () => {
    await pauseAndHandOver('redis', redis.server.url, prefix('redis'));
  }, 120_000);
});

describe.skipIf(!hasZookeeper())('four claims on one ZooKeeper session, paused past the TTL', () => {
  const zk = zookeeperForSuite();
  it('another process claims all four and issues; the paused one issues nothing after resuming', async () => {
    await pauseAndHandOver('zookeeper', zk.server.connect, `/${prefix('zk')}`);
  }, 120_000);
});
