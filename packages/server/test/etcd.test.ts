// The etcd machine-ID source through the bin, against a real etcd on a loopback port.
import { hasEtcd, serverForSuite, startEtcd } from '@ids/test-services';
import { describe, expect, it } from 'vitest';
import { call, startBin } from './helpers.js';

/** The claim keys under the default prefix, through etcd's JSON gateway. */
async function claimKeys(etcdUrl: string): Promise<string[]> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const res = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({
      key: b64('/ids/machine-id/'),
      range_end: b64('/ids/machine-id0'),
      keys_only: true,
    }),
  });
  const body = (await res.json()) as { kvs?: { key: string }[] };
  return (body.kvs ?? [])
    .map((kv) => Buffer.from(kv.key, 'base64').toString())
    .filter((key) => !key.startsWith('/ids/machine-id/time/'));
}
describe.skipIf(!hasEtcd())('ids-server --machine-id-source etcd', () => {
  const etcd = serverForSuite(startEtcd, { stop: (cluster) => cluster.stop() });
  const claimed = () => claimKeys(etcd.server.endpoints[0] as string);

  it('two servers of two machine IDs each hold four distinct leases, serve unique IDs, and free them on SIGTERM', async () => {
    const env = {
      IDS_MACHINE_ID_SOURCE: 'etcd',
      IDS_ETCD_ENDPOINTS: etcd.server.endpoints.join(','),
      IDS_MACHINES: '2',
    };
    const [a, b] = await Promise.all([startBin(env), startBin(env)]);
    const machines: number[] = [];
    const ids: string[] = [];
    for (const run of [a!, b!]) {
      const ready = await call(run.url, 'GET', '/health/ready');
      expect(ready.status).toBe(200);
      machines.push(...ready.json.machines.map((m: { machineId: number }) => m.machineId));
      expect(run.out()).toMatch(/claimed machine ID \d+ in etcd at http:\/\/127\.0\.0\.1:\d+ \(key /);
      ids.push(...(await call(run.url, 'GET', '/ids?count=500')).json.ids);
    }
    expect(new Set(machines).size).toBe(4);
    expect(await claimed()).toHaveLength(4);
    expect(new Set(ids).size).toBe(1000);
    const t0 = performance.now();
    expect(await Promise.all([a!.stop(), b!.stop()])).toEqual([0, 0]);
    expect(performance.now() - t0).toBeLessThan(10_000);
    // Released: no claim key is left under the prefix (the time records stay, for successors).
    expect(await claimed()).toEqual([]);
  });
});
