import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeScratch, scratchDir } from './process.js';

/** A CA made for one test, and a server certificate for 127.0.0.1 signed by it (PEM files). */
export interface TestTls {
  /** The folder holding the files (deleted by `remove`, or when the process exits). */
  readonly dir: string;
  /** The CA's certificate: what a client must trust. */
  readonly caFile: string;
  /** The server's certificate, for IP 127.0.0.1. */
  readonly certFile: string;
  /** The server certificate's private key. */
  readonly keyFile: string;
  /** Deletes the files now. */
  remove(): void;
}

/** Whether openssl is on PATH (selfSignedTls needs it). */
export function hasOpenssl(): boolean {
  return spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Makes a self-signed CA and a server certificate for 127.0.0.1 with openssl, in a temporary
 * folder: a server started with them is trusted by a client given `caFile`, and by no other.
 */
export function selfSignedTls(): TestTls {
  const dir = scratchDir(mkdtempSync(join(tmpdir(), 'ids-tls-')));
  const openssl = (...args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  const rsa = ['-newkey', 'rsa:2048', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...rsa,
    '-days',
    '1',
    '-subj',
    '/CN=ids-test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  openssl('req', ...rsa, '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    ...['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'],
    ...['-days', '1', '-extfile', 'ext.cnf', '-out', 'server.crt'],
  );
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'server.crt'),
    keyFile: join(dir, 'server.key'),
    remove: () => removeScratch(dir),
  };
}
