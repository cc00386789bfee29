import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  onFreePort,
  removeScratch,
  scratchDir,
  startTracked,
  stopChild,
  waitReady,
} from './process.js';
import { type ProxyMode, TcpProxy } from './proxy.js';

/** One ZooKeeper server process: a standalone server, or a member of an ensemble. */
export interface ZookeeperServer {
  /** `127.0.0.1:<port>` (`[::1]:<port>` with `host: '::1'`): the connect string of this server alone. */
  readonly connect: string;
  /** Its client port on the loopback address it was started on. */
  readonly port: number;
  /** Its `myid` in an ensemble (1 for a standalone server). */
  readonly myid: number;
  /** True when the server came from ZOOKEEPER_CONNECT: it cannot be stopped, paused or restarted. */
  readonly external: boolean;
  /** True between a start and the process's exit. */
  readonly running: boolean;
  /** The JVM's pid (undefined for an external server, or when not running). */
  readonly pid: number | undefined;
  /** SIGTERM, then waits for the exit (about 0.4 s). */
  stop(): Promise<void>;
  /** SIGKILL (a crash), then waits for the exit. */
  kill(): Promise<void>;
  /** SIGSTOP: the server stops answering but keeps its connections (a frozen host). */
  pause(): void;
  /** SIGCONT after `pause()`. */
  resume(): void;
  /** Starts it again on the same ports and data directory (its data survives). */
  start(): Promise<void>;
  /** `leader`, `follower` or `standalone` once it serves clients; undefined before (or when down). */
  mode(): Promise<string | undefined>;
  /** The last 8 KiB the server printed (its log goes to its console): why it is not serving. */
  log(): string;
}

/** A standalone ZooKeeper server, which also deletes its directory on close. */
export interface ZookeeperStandalone extends ZookeeperServer {
  /** Stops it and deletes its directory. Safe to call twice. */
  close(): Promise<void>;
}

/** A ZooKeeper ensemble on loopback. */
export interface ZookeeperEnsemble {
  /** `127.0.0.1:<p1>,127.0.0.1:<p2>,…` (`[::1]:<p1>,…` with `host: '::1'`): every member's client port. */
  readonly connect: string;
  /** The members, `myid` 1 to n in order. */
  readonly members: readonly ZookeeperServer[];
  /** The member that leads (asks each with `srvr`), waiting while an election runs; rejects after `timeoutMs`. */
  leader(timeoutMs?: number): Promise<ZookeeperServer>;
  /** Resolves once every running member serves clients (a quorum formed after a change). */
  serving(timeoutMs?: number): Promise<void>;
  /**
   * Cuts `member` off from the other members (an ensemble started `partitionable`): every peer
   * connection to or from it is treated as `mode` (`reset` by default: dropped, and new ones
   * refused), its client port untouched.
   */
  cut(member: ZookeeperServer, mode?: Exclude<ProxyMode, 'pass'>): void;
  /** Lets every peer connection through again after `cut()`. */
  heal(): void;
  /** Stops every member and deletes their directories. Safe to call twice. */
  close(): Promise<void>;
}

/** How `startZookeeper` / `startZookeeperEnsemble` start servers; every option has a default. */
export interface StartZookeeperOptions {
  /**
   * The loopback address the client port binds (zoo.cfg's clientPortAddress): `::1` serves
   * clients over IPv6 only, for the connect strings that name a bracketed address. Peer ports
   * stay on 127.0.0.1. Default 127.0.0.1.
   */
  readonly host?: '127.0.0.1' | '::1';
  /** Where ZooKeeper is installed (holds bin/zkServer.sh). Default: ZOOKEEPER_HOME, else /usr/share/zookeeper. */
  readonly home?: string;
  /** zoo.cfg's tickTime in ms: the unit of session timeouts and of an ensemble's liveness checks. Default 200. */
  readonly tickTimeMs?: number;
  /** The shortest session timeout the server grants, in ms. Default 2 ticks (400 ms at the default tick). */
  readonly minSessionTimeoutMs?: number;
  /** The longest session timeout the server grants, in ms. Default 120,000. */
  readonly maxSessionTimeoutMs?: number;
  /** The JVM's heap ceiling in MiB (-Xmx). Default 96: enough for tests; a fleet of thousands of sessions needs more. */
  readonly heapMb?: number;
  /** Extra zoo.cfg lines (`key=value`). */
  readonly config?: readonly string[];
  /** How long to wait for a server to serve (for an ensemble: each member's `imok`, then a quorum). Default 90,000 ms: a JVM starts slowly on a loaded host. */
  readonly readyTimeoutMs?: number;
  /** Use ZOOKEEPER_CONNECT when it is set (default true); false always starts a server of our own. */
  readonly allowExternal?: boolean;
}

/** The ensemble's options: the server's, how many members, and whether their links can be cut. */
export interface StartEnsembleOptions extends StartZookeeperOptions {
  /** How many members, 3 by default (a quorum survives one member's loss). */
  readonly size?: number;
  /**
   * Runs every peer connection (quorum and election ports, each direction) through a TcpProxy
   * of its own, so that `cut()` can isolate one member from the others; each member's zoo.cfg
   * then names the others by their proxies, and itself by its own ports. Default false.
   */
  readonly partitionable?: boolean;
}

/** Whether ZooKeeper's server script and a Java runtime are installed (for `describe.skipIf`). */
export function hasZookeeper(home = zookeeperHome()): boolean {
  return Boolean(process.env.ZOOKEEPER_CONNECT) || existsSync(join(home, 'bin', 'zkServer.sh'));
}

function zookeeperHome(options: StartZookeeperOptions = {}): string {
  return options.home ?? process.env.ZOOKEEPER_HOME ?? '/usr/share/zookeeper';
}

/**
 * Sends a four-letter command and resolves with the whole reply ('' when nothing answers). The
 * server closes the connection after answering; there is no `nc` on the image, hence a socket.
 */
export function fourLetters(
  port: number,
  command: string,
  timeoutMs = 2000,
  host: '127.0.0.1' | '::1' = '127.0.0.1',
): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let reply = '';
    const done = () => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(timeoutMs, done);
    socket.once('connect', () => socket.write(command));
    socket.on('data', (data) => {
      reply += data.toString();
    });
    socket.once('end', done);
    socket.once('error', done);
  });
}

/** The `Mode:` line of `srvr`: only a server that serves clients (has a quorum) prints one. */
async function modeOf(port: number, host?: '127.0.0.1' | '::1'): Promise<string | undefined> {
  return /^Mode: (\w+)/m.exec(await fourLetters(port, 'srvr', undefined, host))?.[1];
}

/** `host:port` as a connect string spells it: an IPv6 address in brackets. */
const hostPort = (options: StartZookeeperOptions, port: number) =>
  options.host === '::1' ? `[::1]:${port}` : `127.0.0.1:${port}`;

interface MemberPorts {
  readonly myid: number;
  readonly client: number;
  readonly quorum: number;
  readonly election: number;
}

/**
 * Starts one server process over `dir` (zoo.cfg, myid and data are there) and returns its
 * handle. `config` yields the zoo.cfg text; it is written before every start.
 */
function serverProcess(
  options: StartZookeeperOptions,
  dir: string,
  myid: number,
  clientPort: () => number,
  config: () => string,
  ready: (port: number) => Promise<boolean>,
): ZookeeperServer & { startNow(): Promise<void> } {
  const script = join(zookeeperHome(options), 'bin', 'zkServer.sh');
  let child: ChildProcess | undefined;
  let output: () => string = () => '';
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function start(): Promise<void> {
    if (isRunning()) return;
    writeFileSync(join(dir, 'zoo.cfg'), config());
    const started = startTracked(script, ['start-foreground', join(dir, 'zoo.cfg')], {
      exitSignal: 'SIGKILL',
      env: {
        ...process.env,
        ZOOCFGDIR: dir,
        ZOO_LOG_DIR: dir,
        // A small heap and the quick JIT tier: tests need many servers on a loaded host, not
        // speed. An election round without agreement waits twice as long as the last, up to
        // 60 s by default: with the leader cut off, the two others took 14 s to 90 s to agree
        // here, and 1 s with the rounds capped at 1 s.
        JVMFLAGS: `-Xmx${options.heapMb ?? 96}m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.fastleader.maxNotificationInterval=1000`,
        JMXDISABLE: 'true',
      },
    });
    child = started.child;
    output = started.output;
    await waitReady(
      `ZooKeeper ${myid} on port ${clientPort()}`,
      started.child,
      () => ready(clientPort()),
      options.readyTimeoutMs ?? 90_000,
      started.output,
    );
  }

  return {
    get connect() {
      return hostPort(options, clientPort());
    },
    get port() {
      return clientPort();
    },
    myid,
    external: false,
    get running() {
      return isRunning();
    },
    get pid() {
      return isRunning() ? child?.pid : undefined;
    },
    startNow: start,
    start,
    stop: async () => {
      if (child) await stopChild(child, 'SIGTERM');
    },
    kill: async () => {
      if (child) await stopChild(child, 'SIGKILL');
    },
    pause: () => {
      child?.kill('SIGSTOP');
    },
    resume: () => {
      child?.kill('SIGCONT');
    },
    mode: () => (isRunning() ? modeOf(clientPort(), options.host) : Promise.resolve(undefined)),
    log: () => output(),
  };
}

/** zoo.cfg lines every server gets. */
function commonConfig(options: StartZookeeperOptions, dir: string, clientPort: number): string[] {
  const tick = options.tickTimeMs ?? 200;
  return [
    `tickTime=${tick}`,
    `dataDir=${dir}`,
    `clientPort=${clientPort}`,
    `clientPortAddress=${options.host ?? '127.0.0.1'}`,
    'admin.enableServer=false',
    '4lw.commands.whitelist=ruok,srvr',
    // Every test client dials from the one loopback address; the default of 60 connections per address is too few.
    'maxClientCnxns=0',
    `minSessionTimeout=${options.minSessionTimeoutMs ?? 2 * tick}`,
    `maxSessionTimeout=${options.maxSessionTimeoutMs ?? 120_000}`,
    // Room for a JVM that a loaded host starves for a few seconds: followers must not drop out.
    'initLimit=50',
    'syncLimit=10',
    ...(options.config ?? []),
  ];
}

/**
 * Starts a real standalone ZooKeeper on a free loopback port, in a temporary directory; ready
 * once it serves clients (`srvr` reports its mode). With ZOOKEEPER_CONNECT set, returns a handle on that
 * server instead (tests that stop, pause or restart it must skip when `external` is true).
 */
export async function startZookeeper(options: StartZookeeperOptions = {}): Promise<ZookeeperStandalone> {
  const externalConnect = options.allowExternal === false ? undefined : process.env.ZOOKEEPER_CONNECT;
  if (externalConnect) return externalZookeeper(externalConnect);
  const dir = scratchDir(mkdtempSync(join(tmpdir(), 'ids-zookeeper-')));
  let port = 0;
  const server = serverProcess(
    options,
    dir,
    1,
    () => port,
    () => `${commonConfig(options, dir, port).join('\n')}\n`,
    // Serving, not `imok`: a standalone server answers `ruok` 0.3 to 1.2 s (4 busy loops here)
    // before it takes sessions, and a test's first session opened in that gap waited on the
    // client's reconnects (once past a 10 s timeout in CI). `srvr` prints a mode only once it serves.
    async (p) => (await modeOf(p, options.host)) !== undefined,
  );
  // Later starts (a restart) use the same port: another process may take it meanwhile, which
  // such a start then reports.
  port = await onFreePort((free) => {
    port = free;
    return server.startNow();
  });
  return Object.assign(server, {
    close: async () => {
      await server.stop();
      removeScratch(dir);
    },
  });
}

/**
 * Starts a real ZooKeeper ensemble of `size` members (3 by default) on free loopback ports,
 * each in its own temporary directory with its `myid`; resolves once every member serves
 * clients (a leader was elected and the followers synced). Members can be stopped, killed,
 * paused and restarted one by one; `partitionable` puts a proxy on every peer connection so
 * that `cut()` isolates one member.
 */
export async function startZookeeperEnsemble(options: StartEnsembleOptions = {}): Promise<ZookeeperEnsemble> {
  // A member that exits during start-up (seen once in a fresh-clone run: status 1, nothing
  // logged; a port taken between choosing it and binding it fits) gets a whole new ensemble on
  // new ports and a new directory, twice at most; any other failure is the test's to see.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEnsembleOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/exited during start-up/.test(String((error as Error)?.message))) throw error;
    }
  }
}

async function startEnsembleOnce(options: StartEnsembleOptions): Promise<ZookeeperEnsemble> {
  const size = options.size ?? 3;
  const root = scratchDir(mkdtempSync(join(tmpdir(), 'ids-zookeeper-ensemble-')));
  const ports: MemberPorts[] = [];
  for (let myid = 1; myid <= size; myid++) {
    ports.push({ myid, client: await freePort(), quorum: await freePort(), election: await freePort() });
  }
  // Each member's view of the others' peer ports: through a proxy per link when partitionable.
  const views = new Map<string, number>();
  const links: { from: number; to: number; proxy: TcpProxy }[] = [];
  const link = async (from: number, to: number, port: number, retryRefusedMs = 0): Promise<number> => {
    if (!options.partitionable) return port;
    const proxy = await TcpProxy.start(`127.0.0.1:${port}`, { retryRefusedMs });
    links.push({ from, to, proxy });
    return Number(new URL(proxy.url).port);
  };
  for (const from of ports) {
    for (const to of ports) {
      if (from === to) continue;
      // A follower may dial its new leader's quorum port before the leader opens it: a refusal
      // it would retry, but a drop (what the proxy shows it) sent it back to an election that
      // the leader ignored until its initLimit ran out, 10 s a time and over 90 s once on a
      // loaded CI machine. Retried for 5 s (half that limit), the dial looks like a slow leader.
      views.set(`${from.myid}>${to.myid}:q`, await link(from.myid, to.myid, to.quorum, 5000));
      views.set(`${from.myid}>${to.myid}:e`, await link(from.myid, to.myid, to.election));
    }
  }
  const members = ports.map((own) => {
    const dir = join(root, String(own.myid));
    mkdirSync(dir);
    writeFileSync(join(dir, 'myid'), `${own.myid}\n`);
    const servers = ports.map((p) => {
      const quorum = p === own ? p.quorum : views.get(`${own.myid}>${p.myid}:q`);
      const election = p === own ? p.election : views.get(`${own.myid}>${p.myid}:e`);
      return `server.${p.myid}=127.0.0.1:${quorum}:${election}`;
    });
    return serverProcess(
      options,
      dir,
      own.myid,
      () => own.client,
      // Static membership: without reconfig, each member keeps its own view of the peer addresses.
      () =>
        `${[...commonConfig(options, dir, own.client), 'reconfigEnabled=false', ...servers].join('\n')}\n`,
      // `imok` means the JVM runs, not that it serves: the ensemble waits for a quorum below.
      async (p) => (await fourLetters(p, 'ruok', 500, options.host)) === 'imok',
    );
  });
  const ensemble: ZookeeperEnsemble = {
    connect: ports.map((p) => hostPort(options, p.client)).join(','),
    members,
    async leader(timeoutMs = options.readyTimeoutMs ?? 90_000) {
      // Right after a change the members may still report the old roles, or none while they
      // elect: wait for one leader among the running members.
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const running = members.filter((m) => m.running);
        const modes = await Promise.all(running.map((m) => m.mode()));
        const leaders = running.filter((_, i) => modes[i] === 'leader');
        if (leaders.length === 1) return leaders[0] as ZookeeperServer;
        if (Date.now() > deadline) {
          throw new Error(
            `no single leader in the ZooKeeper ensemble within ${timeoutMs} ms (modes: ${modes.join(', ')})`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async serving(timeoutMs = options.readyTimeoutMs ?? 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const modes = await Promise.all(members.map((m) => (m.running ? m.mode() : 'down')));
        if (modes.every((m) => m !== undefined)) return;
        if (Date.now() > deadline) {
          throw new Error(
            `the ZooKeeper ensemble did not serve within ${timeoutMs} ms (modes: ${modes.join(', ')})`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    cut(member, mode = 'reset') {
      if (!options.partitionable) throw new Error('cut() needs an ensemble started with partitionable: true');
      for (const l of links) if (l.from === member.myid || l.to === member.myid) l.proxy.setMode(mode);
    },
    heal() {
      for (const l of links) l.proxy.setMode('pass');
    },
    async close() {
      await Promise.all(members.map((m) => m.stop()));
      for (const l of links.splice(0)) await l.proxy.close();
      removeScratch(root);
    },
  };
  try {
    await Promise.all(members.map((m) => m.startNow()));
    await ensemble.serving();
  } catch (error) {
    await ensemble.close();
    throw error;
  }
  return ensemble;
}

function externalZookeeper(connectString: string): ZookeeperStandalone {
  const refuse = async () => {
    throw new Error(
      'this ZooKeeper came from ZOOKEEPER_CONNECT: it cannot be stopped, killed or restarted by the tests',
    );
  };
  const port = Number(/:(\d+)/.exec(connectString)?.[1] ?? 2181);
  return {
    connect: connectString,
    port,
    myid: 1,
    external: true,
    running: true,
    pid: undefined,
    start: async () => {},
    stop: refuse,
    kill: refuse,
    pause: () => {
      throw new Error('this ZooKeeper came from ZOOKEEPER_CONNECT: it cannot be paused by the tests');
    },
    resume: () => {},
    mode: () => modeOf(port),
    log: () => '',
    close: async () => {},
  };
}
