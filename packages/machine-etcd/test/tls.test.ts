// etcd over TLS with a self-signed CA made here by openssl: trusted, the claim works; not
// trusted, the error is LeaseStoreRefusedError (a setup error), not StoreUnavailableError ("wait").
import { MachineIdProviderError } from '@ids/engine';
import { hasOpenssl } from '@ids/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseStoreRefusedError } from '../src/index.js';
import { canStartEtcd, claim, failure, freshPrefix, layoutWith } from './helpers.js';
import { startTlsEtcd, type TlsEtcd } from './tls-etcd.js';

describe.skipIf(!canStartEtcd || !hasOpenssl())('etcd over TLS', () => {
  let etcd: TlsEtcd;
  let endpoint: string;
  beforeAll(async () => {
    etcd = await startTlsEtcd();
    endpoint = etcd.endpoint;
  });
  afterAll(() => etcd?.stop());

  it('trusted CA: claims; untrusted: LeaseStoreRefusedError (ERR_IDS_LEASE_STORE_REFUSED) within the timeout, not StoreUnavailableError', async () => {
    const layout = layoutWith(4);
    const { rootCertificate } = etcd;
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
