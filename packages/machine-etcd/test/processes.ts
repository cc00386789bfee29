import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const fixture = join(__dirname, 'fixtures', 'issuer.mjs');

/** How the issuer takes machine ID 0: Go's check, or a held claim of exactly that ID. */
export type IssuerMode = 'check' | 'fixed';

/** One issuer process (test/fixtures/issuer.mjs) and what it printed. */
export interface Issuer {
  readonly child: ChildProcess;
  /** Every ID it printed, with the wall time it came back. */
  readonly ids: { id: bigint; at: number }[];
  /** Wall time it said it held its claim, once it has. */
  claimedAt: number | undefined;
  /** SIGTERM, then resolves when it has closed and exited. */
  stop(): Promise<void>;
}

/** Starts an issuer of machine ID 0 on etcd under `prefix`. */
export function startIssuer(mode: IssuerMode, endpoints: string[], prefix: string): Issuer {
  const child = spawn(process.execPath, [fixture, mode, endpoints.join(','), prefix], {
    cwd: join(__dirname, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buffer = '';
  let err = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const issuer: Issuer = {
    child,
    ids: [],
    claimedAt: undefined,
    async stop() {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      if (child.exitCode !== 0)
        throw new Error(`issuer exited with ${child.exitCode ?? child.signalCode}: ${err}`);
    },
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      const [a, b, c] = line.split(' ');
      if (a === 'claimed') issuer.claimedAt = Number(c);
      else if (a !== 'closed' && a) issuer.ids.push({ id: BigInt(a), at: Number(b) });
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  return issuer;
}
