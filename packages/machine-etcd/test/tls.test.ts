// etcd over TLS with a self-signed CA made here by openssl: trusted, the claim works; not
// trusted, the error is EtcdTlsError (a setup error), not EtcdUnavailableError ("wait").
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MachineIdProviderError } from '@ids/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdTlsError } from '../src/index.js';
import { freePort } from '../src/testing.js';
import { canStartEtcd, claim, failure, freshPrefix, layoutWith, sleep } from './helpers.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

describe.skipIf(!canStartEtcd || !hasOpenssl)('etcd over TLS', () => {
  let dir: string;
  let etcd: ChildProcess;
  let endpoint: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ids-etcd-tls-'));
    const run = (...args: string[]) => {
      const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
    };
    run(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=ids-test-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
    );
    run(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
    );
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
    run(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      'ext.cnf',
      '-out',
      'server.crt',
    );
    const [client, peer] = [await freePort(), await freePort()];
    endpoint = `https://127.0.0.1:${client}`;
    const peerUrl = `http://127.0.0.1:${peer}`;
    etcd = spawn(
      process.env.ETCD_BIN ?? 'etcd',
      [
        '--name',
        'tls',
        '--data-dir',
        join(dir, 'data'),
        '--listen-client-urls',
        endpoint,
        '--advertise-client-urls',
        endpoint,
        '--listen-peer-urls',
        peerUrl,
        '--initial-advertise-peer-urls',
        peerUrl,
        '--initial-cluster',
        `tls=${peerUrl}`,
        '--cert-file',
        join(dir, 'server.crt'),
        '--key-file',
        join(dir, 'server.key'),
      ],
      { stdio: 'ignore' },
    );
    await sleep(1500);
  });
  afterAll(() => {
    etcd?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('trusted CA: claims; untrusted: EtcdTlsError (ERR_IDS_ETCD_TLS) within the timeout, not EtcdUnavailableError', async () => {
    const layout = layoutWith(4);
    const rootCertificate = readFileSync(join(dir, 'ca.crt'));
    const held = await claim(layout, {
      endpoints: endpoint,
      credentials: { rootCertificate },
      prefix: freshPrefix('tls'),
    });
    expect(held.machineId).toBeGreaterThanOrEqual(0);
    await held.release();
    const t0 = performance.now();
    const error = await failure(
      claim(layout, { endpoints: endpoint, prefix: freshPrefix('tls-untrusted'), timeoutMs: 2000 }),
    );
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(error).toBeInstanceOf(MachineIdProviderError);
    expect(error.cause).toBeInstanceOf(EtcdTlsError);
    expect((error.cause as EtcdTlsError).code).toBe('ERR_IDS_ETCD_TLS');
    console.log(`untrusted TLS: ${(error.cause as Error).message}`);
  });
});
