// etcd over TLS with a self-signed CA made here by openssl: trusted, the claim works; not
// trusted, the error is LeaseStoreRefusedError (a setup error), not LeaseStoreUnavailableError ("wait").
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MachineIdProviderError } from '@ids/engine';
import { freePort, hasOpenssl, selfSignedTls, type TestTls } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseStoreRefusedError } from '../src/index.js';
import { canStartEtcd, claim, failure, freshPrefix, layoutWith, sleep } from './helpers.js';

describe.skipIf(!canStartEtcd || !hasOpenssl())('etcd over TLS', () => {
  let tls: TestTls;
  let etcd: ChildProcess;
  let endpoint: string;
  beforeAll(async () => {
    tls = selfSignedTls();
    const [client, peer] = [await freePort(), await freePort()];
    endpoint = `https://127.0.0.1:${client}`;
    const peerUrl = `http://127.0.0.1:${peer}`;
    etcd = spawn(
      process.env.ETCD_BIN ?? 'etcd',
      [
        '--name',
        'tls',
        '--data-dir',
        join(tls.dir, 'data'),
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
        tls.certFile,
        '--key-file',
        tls.keyFile,
      ],
      { stdio: 'ignore' },
    );
    await sleep(1500);
  });
  afterAll(() => {
    etcd?.kill('SIGKILL');
    tls?.remove();
  });

  it('trusted CA: claims; untrusted: LeaseStoreRefusedError (ERR_IDS_LEASE_STORE_REFUSED) within the timeout, not LeaseStoreUnavailableError', async () => {
    const layout = layoutWith(4);
    const rootCertificate = readFileSync(tls.caFile);
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
    expect(error.cause).toBeInstanceOf(LeaseStoreRefusedError);
    expect((error.cause as LeaseStoreRefusedError).code).toBe('ERR_IDS_LEASE_STORE_REFUSED');
    console.log(`untrusted TLS: ${(error.cause as Error).message}`);
  });
});
