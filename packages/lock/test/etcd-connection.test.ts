// The etcd locks run on @ids/machine-etcd's connection: TLS and a user's credentials work, and a
// request etcd refuses (permission denied) fails at once as LeaseStoreRefusedError instead of
// being waited out until waitMs as if etcd were down. The TLS etcd is machine-etcd's test setup,
// with auth turned on here: a root user, and a user `locker` who may write under one prefix only.
import { hasEtcd, hasOpenssl } from '@ids/test-services';
import { Etcd3, Range } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsEtcd, type TlsEtcd } from '../../machine-etcd/test/tls-etcd.js';
import { etcdLocks } from '../src/etcd.js';
import { failure } from './helpers.js';

const ALLOWED = '/allowed/';

describe.skipIf(!hasEtcd() || !hasOpenssl())('etcd locks over TLS with auth', () => {
  let etcd: TlsEtcd;
  beforeAll(async () => {
    etcd = await startTlsEtcd();
    const admin = new Etcd3({
      hosts: [etcd.endpoint],
      credentials: { rootCertificate: etcd.rootCertificate },
    });
    try {
      await admin.role('root').create();
      await (await admin.user('root').create('root-pw')).addRole('root');
      await (await admin.role('locks').create()).grant({
        permission: 'Readwrite',
        range: Range.prefix(ALLOWED),
      });
      await (await admin.user('locker').create('locker-pw')).addRole('locks');
      await admin.auth.authEnable();
    } finally {
      admin.close();
    }
  }, 30_000);
  afterAll(() => etcd?.stop());

  const options = (prefix: string, password = 'locker-pw') => ({
    endpoints: [etcd.endpoint],
    credentials: { rootCertificate: etcd.rootCertificate },
    auth: { username: 'locker', password },
    prefix,
  });

  it('acquires, fences and releases with credentials over TLS', async () => {
    const locks = await etcdLocks(options(ALLOWED));
    try {
      const first = await locks.acquire('orders:42', { ttlMs: 2000 });
      const fence = first.fence;
      expect(await locks.tryAcquire('orders:42')).toBeUndefined();
      await first.release();
      const second = await locks.acquire('orders:42', { ttlMs: 2000, waitMs: 5000 });
      expect(second.fence).toBeGreaterThan(fence);
      await second.release();
    } finally {
      await locks.close();
    }
  });

  it('a prefix the user may not write: LeaseStoreRefusedError at once, not a wait until waitMs', async () => {
    // Reading is refused too, so the factory says so at once.
    const opening = await failure(etcdLocks(options('/forbidden/')));
    expect(opening).toMatchObject({ code: 'ERR_IDS_LEASE_STORE_REFUSED', store: 'etcd' });
    expect(opening.message).toMatch(/permission denied/i);
  });

  it('a wrong password: LeaseStoreRefusedError at once', async () => {
    const started = performance.now();
    const error = await failure(etcdLocks(options(ALLOWED, 'wrong')));
    expect(error).toMatchObject({ code: 'ERR_IDS_LEASE_STORE_REFUSED', store: 'etcd' });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('permission denied mid-way (the role lost its grant): acquire fails at once, refused', async () => {
    const locks = await etcdLocks(options(ALLOWED));
    const root = new Etcd3({
      hosts: [etcd.endpoint],
      credentials: { rootCertificate: etcd.rootCertificate },
      auth: { username: 'root', password: 'root-pw' },
    });
    try {
      await root.role('locks').revoke({ permission: 'Readwrite', range: Range.prefix(ALLOWED) });
      const started = performance.now();
      const error = await failure(locks.acquire('n', { waitMs: 10_000 }));
      const ms = performance.now() - started;
      console.log(`permission denied: ${error.name} after ${Math.round(ms)} ms: ${error.message}`);
      expect(error).toMatchObject({ code: 'ERR_IDS_LEASE_STORE_REFUSED', store: 'etcd' });
      expect(ms).toBeLessThan(3000);
    } finally {
      await root.role('locks').grant({ permission: 'Readwrite', range: Range.prefix(ALLOWED) });
      root.close();
      await locks.close();
    }
  });
});
