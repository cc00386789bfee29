import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, runs, startTracked } from './process.js';

/**
 * Real etcd servers for tests: each member runs on free loopback ports with its own temporary
 * data directory, with fast raft timing (10 ms heartbeats, 100 ms elections) so a cluster is
 * ready in well under a second. Members can be stopped, killed and restarted on the same ports
 * and data. Everything started here is stopped by `stop()`, and killed when the process exits
 * or is terminated by a signal; a run that was killed outright (SIGKILL) leaves its etcd
 * behind only until the next run starts one, which sweeps such leftovers first.
 */
export interface EtcdMember {
  /** The member's etcd name: n1, n2, ... */
  readonly name: string;
  /** `http://127.0.0.1:<port>`: what clients dial. */
  readonly clientUrl: string;
  /** `http://127.0.0.1:<port>`: what the other members dial. */
  readonly peerUrl: string;
  /** Its data directory, kept across stop and start, deleted by the cluster's `stop()`. */
  readonly dataDir: string;
  /** True between a start and the process's exit. */
  readonly running: boolean;
  /** Starts it again on the same ports and data (after stop or kill). */
  start(): Promise<void>;
  /** SIGTERM, then waits for the process to exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: no goodbye to its peers), then waits for the exit. */
  kill(): Promise<void>;
}

/** What `startEtcd` started: its members, and how to stop them all. */
export interface EtcdCluster {
  /** Every member, in name order (n1 first). */
  readonly members: readonly EtcdMember[];
  /** Client URLs of all members, for `endpoints`. */
  readonly endpoints: string[];
  /** The member that currently leads (asks a running member). */
  leader(): Promise<EtcdMember>;
  /** Stops every member and deletes the data directories. Safe to call twice. */
  stop(): Promise<void>;
}

/** How `startEtcd` starts a cluster; every option has a default. */
export interface StartEtcdOptions {
  /** Number of members. Default 1. */
  readonly size?: number;
  /** The etcd binary. Default: ETCD_BIN, else `etcd` on PATH. */
  readonly binary?: string;
  /** Where data directories go. Default: the OS temp directory. */
  readonly dataRoot?: string;
  /** How long to wait for the cluster to answer /health. Default 15,000 ms. */
  readonly readyTimeoutMs?: number;
}

const DIR_PREFIX = 'ids-etcd-';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills etcd servers left by runs of this harness whose process is gone, and removes their data. */
function sweep(root: string): void {
  for (const name of readdirSync(root)) {
    const match = /^ids-etcd-(\d+)-/.exec(name);
    if (!match || alive(Number(match[1]))) continue;
    const dir = join(root, name);
    for (const file of readdirSync(dir)) {
      if (!file.endsWith('.pid')) continue;
      const pid = Number(readFileSync(join(dir, file), 'utf8'));
      // Only if that pid is still an etcd using this directory (pids get reused).
      const cmdline = `/proc/${pid}/cmdline`;
      if (pid > 0 && existsSync(cmdline) && readFileSync(cmdline, 'utf8').includes(dir)) {
        process.kill(pid, 'SIGKILL');
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function health(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(500) });
    const body = (await response.json()) as { health?: string };
    return body.health === 'true';
  } catch {
    return false;
  }
}

class Member implements EtcdMember {
  #child: ChildProcess | undefined;
  #output: () => string = () => '';

  constructor(
    readonly name: string,
    readonly clientUrl: string,
    readonly peerUrl: string,
    readonly dataDir: string,
    readonly args: readonly string[],
    readonly binary: string,
    readonly pidFile: string,
  ) {}

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** The end of what the current (or last) process wrote, for errors about its start. */
  get stderr(): string {
    return this.#output();
  }

  spawn(): void {
    if (this.running) return;
    const { child, output } = startTracked(this.binary, this.args, { exitSignal: 'SIGKILL' });
    let failure = '';
    // A binary that cannot be run is an 'error' event, not an exit: keep its message (ENOENT).
    child.on('error', (error) => {
      failure = `\n${error.message}`;
    });
    this.#output = () => (output() + failure).slice(-4000);
    if (child.pid) writeFileSync(this.pidFile, String(child.pid));
    this.#child = child;
  }

  async start(): Promise<void> {
    this.spawn();
    await waitHealthy([this], 15_000);
  }

  async stop(): Promise<void> {
    await this.#signal('SIGTERM');
  }

  async kill(): Promise<void> {
    await this.#signal('SIGKILL');
  }

  async #signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill(signal);
    await exited(child);
  }
}

async function waitHealthy(members: readonly Member[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const dead = members.find((m) => !m.running);
    if (dead) {
      throw new Error(
        `etcd member ${dead.name} exited during start-up: ${dead.stderr.trim() || '(no output)'}`,
      );
    }
    const checks = await Promise.all(members.map((m) => health(m.clientUrl)));
    if (checks.every(Boolean)) return;
    if (Date.now() > until) {
      throw new Error(
        `etcd did not become healthy within ${timeoutMs} ms: ${members.map((m) => `${m.name}: ${m.stderr.trim() || 'no output'}`).join('; ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Whether an etcd binary can be started here (for `describe.skipIf`); ETCD_ENDPOINTS is not counted. */
export function hasEtcd(binary = process.env.ETCD_BIN ?? 'etcd'): boolean {
  return runs(binary);
}

/**
 * Starts an etcd cluster of `size` members (default 1) on loopback and waits until every
 * member reports healthy (which needs an elected leader).
 *
 * @throws Error naming the binary when etcd is not installed, or with etcd's own output when a
 * member exits during start-up or the cluster is not healthy in time.
 */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdCluster> {
  // A port found free can be taken by another process before etcd binds it (test files run in
  // parallel, each starting etcd). Such a start fails; a second attempt gets other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || (error instanceof Error && error.message.startsWith('cannot run etcd')))
        throw error;
    }
  }
}

async function startOnce(options: StartEtcdOptions): Promise<EtcdCluster> {
  const size = options.size ?? 1;
  const binary = options.binary ?? process.env.ETCD_BIN ?? 'etcd';
  const root = options.dataRoot ?? tmpdir();
  sweep(root);
  const dir = mkdtempSync(join(root, `${DIR_PREFIX}${process.pid}-`));
  // One token for the whole cluster: members with different tokens form different clusters.
  const token = `ids-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const ports = await Promise.all(Array.from({ length: size * 2 }, freePort));
  const names = Array.from({ length: size }, (_, i) => `n${i + 1}`);
  const peerUrls = names.map((_, i) => `http://127.0.0.1:${ports[size + i]}`);
  const initialCluster = names.map((name, i) => `${name}=${peerUrls[i]}`).join(',');
  const members = names.map((name, i) => {
    const clientUrl = `http://127.0.0.1:${ports[i]}`;
    const dataDir = join(dir, name);
    const args = [
      ...['--name', name, '--data-dir', dataDir],
      ...['--listen-client-urls', clientUrl, '--advertise-client-urls', clientUrl],
      ...['--listen-peer-urls', peerUrls[i]!, '--initial-advertise-peer-urls', peerUrls[i]!],
      ...['--initial-cluster', initialCluster, '--initial-cluster-state', 'new'],
      ...['--initial-cluster-token', token],
      ...['--logger', 'zap', '--log-level', 'error'],
      // Raft timing for tests: a leader in ~100 ms, and leases as short as 1 s are honoured
      // (etcd raises a TTL below 1.5 election timeouts to that floor).
      ...['--heartbeat-interval', '10', '--election-timeout', '100'],
    ];
    return new Member(name, clientUrl, peerUrls[i]!, dataDir, args, binary, join(dir, `${name}.pid`));
  });
  let stopped = false;
  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.clientUrl),
    async leader() {
      for (const member of members) {
        if (!member.running) continue;
        try {
          const response = await fetch(`${member.clientUrl}/v3/maintenance/status`, {
            method: 'POST',
            body: '{}',
            signal: AbortSignal.timeout(1000),
          });
          const status = (await response.json()) as { leader?: string; header?: { member_id?: string } };
          if (!status.leader) continue;
          for (const candidate of members) {
            if (!candidate.running) continue;
            const r = await fetch(`${candidate.clientUrl}/v3/maintenance/status`, {
              method: 'POST',
              body: '{}',
              signal: AbortSignal.timeout(1000),
            });
            const s = (await r.json()) as { header?: { member_id?: string } };
            if (s.header?.member_id === status.leader) return candidate;
          }
        } catch {}
      }
      throw new Error('no running etcd member knows a leader');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(members.map((m) => m.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const member of members) member.spawn();
    await waitHealthy(members, options.readyTimeoutMs ?? 15_000);
  } catch (error) {
    await cluster.stop();
    const missing = members[0]?.stderr.includes('ENOENT');
    if (missing) {
      throw new Error(
        `cannot run etcd (${binary}): install it (Debian/Ubuntu: apt-get install etcd-server; or run scripts/ensure-services.mjs) or set ETCD_BIN`,
        { cause: error },
      );
    }
    throw error;
  }
  return cluster;
}
