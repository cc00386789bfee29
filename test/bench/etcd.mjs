// Claiming machine IDs from a real etcd on loopback: the latency of one claim, and how long
// 1,000 claimers take to fill a 10-bit field (1,024 IDs). Starts its own etcd (Debian's
// etcd-server: `node scripts/ensure-services.mjs` installs it) unless ETCD_ENDPOINTS names one.
import { cpus, loadavg } from 'node:os';
import { etcdMachineId } from '@ids/machine-etcd';
import { startEtcd } from '@ids/test-services';
import { Etcd3 } from 'etcd3';
import { claimLatencies, fmt, formatTable } from './lib/measure.mjs';

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function benchEtcd({ claims = 300, claimers = 1000 } = {}) {
  const external = process.env.ETCD_ENDPOINTS;
  const load = (loadavg()[0] ?? 0).toFixed(1);
  const etcd = external ? { endpoints: external.split(','), stop: async () => {} } : await startEtcd();
  const shared = new Etcd3({ hosts: etcd.endpoints });
  const rows = [];
  let run = 0;
  const prefix = () => `/ids-bench/${process.pid}-${run++}`;
  try {
    const base = { ttlSeconds: 10, timeoutMs: 30_000 };
    // Warm up the server and the shared client.
    await claimLatencies(etcdMachineId({ ...base, client: shared, prefix: prefix() }), 20);

    // What the machine itself costs: a bare etcd read, and a bare write, in the same run.
    const reads = [];
    const writes = [];
    for (let i = 0; i < claims; i++) {
      let t0 = performance.now();
      await shared.get('/ids-bench/baseline');
      reads.push(performance.now() - t0);
      t0 = performance.now();
      await shared.put('/ids-bench/baseline').value(String(i));
      writes.push(performance.now() - t0);
    }
    reads.sort((a, b) => a - b);
    writes.sort((a, b) => a - b);
    await shared.delete().key('/ids-bench/baseline');
    rows.push([
      `baseline: a bare etcd read / write (${claims} each)`,
      `read p50 ${fmt.ms(percentile(reads, 50))} ms, p99 ${fmt.ms(percentile(reads, 99))} ms; write p50 ${fmt.ms(percentile(writes, 50))} ms, p99 ${fmt.ms(percentile(writes, 99))} ms`,
      '',
      '',
    ]);

    const warm = await claimLatencies(etcdMachineId({ ...base, client: shared, prefix: prefix() }), claims);
    rows.push([
      `claim latency, one client for all (${claims} claims, held: the field fills to ${fmt.pct(claims / 1024)})`,
      `p50 ${fmt.ms(percentile(warm, 50))} ms, p99 ${fmt.ms(percentile(warm, 99))} ms, max ${fmt.ms(percentile(warm, 100))} ms`,
      'p99 < 20 ms',
      percentile(warm, 99) < 20 ? 'met' : 'MISSED',
    ]);
    const cold = await claimLatencies(
      etcdMachineId({ ...base, endpoints: etcd.endpoints, prefix: prefix() }),
      Math.min(claims, 100),
    );
    rows.push([
      `claim latency, a new client per claim (${cold.length} claims, connecting included)`,
      `p50 ${fmt.ms(percentile(cold, 50))} ms, p99 ${fmt.ms(percentile(cold, 99))} ms`,
      '',
      '',
    ]);

    /** @type {[string, import('@ids/machine-etcd').EtcdMachineIdOptions][]} */
    const fills = [
      ['one client shared', { ...base, client: shared }],
      ['a client each', { ...base, endpoints: etcd.endpoints }],
    ];
    for (const [label, options] of fills) {
      const provider = etcdMachineId({ ...options, prefix: prefix() });
      const t0 = performance.now();
      const held = await Promise.all(Array.from({ length: claimers }, () => provider({ bits: 10 })));
      const seconds = (performance.now() - t0) / 1000;
      const distinct = new Set(held.map((c) => c.machineId)).size;
      await Promise.all(held.map((c) => c.release()));
      rows.push([
        `${fmt.int(claimers)} concurrent claimers fill 1,024 IDs (${label})`,
        `${fmt.s(seconds)} s, ${fmt.int(distinct)} distinct IDs of ${fmt.int(claimers)}`,
        '< 10 s, all distinct',
        seconds < 10 && distinct === claimers ? 'met' : 'MISSED',
      ]);
    }
  } finally {
    shared.close();
    await etcd.stop();
  }
  return {
    title: `Claiming machine IDs from etcd on loopback (${external ? `ETCD_ENDPOINTS=${external}` : 'etcd 3.4 started here, data in the OS temp dir'}; load average ${load} on ${cpus().length} cores at the start)`,
    table: formatTable(['measure', 'result', 'target', ''], rows),
  };
}
