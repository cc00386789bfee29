// An etcd that serves its clients over TLS only, with a self-signed CA made by openssl: the
// setup of this package's TLS test, shared with @ids/lock's etcd tests (which add auth on it).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, selfSignedTls, type TestTls } from '@ids/test-services';

/** A running TLS etcd: its https endpoint, the CA that signs its certificate, and how to stop it. */
export interface TlsEtcd {
  readonly endpoint: string;
  readonly rootCertificate: Buffer;
  readonly tls: TestTls;
  stop(): void;
}

export async function startTlsEtcd(): Promise<TlsEtcd> {
  const tls = selfSignedTls();
  const [client, peer] = [await freePort(), await freePort()];
  const endpoint = `https://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const etcd: ChildProcess = spawn(
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
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return {
    endpoint,
    rootCertificate: readFileSync(tls.caFile),
    tls,
    stop() {
      etcd.kill('SIGKILL');
      tls.remove();
    },
  };
}
