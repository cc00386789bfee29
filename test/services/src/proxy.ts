import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * How a TcpProxy treats traffic:
 * - `pass`: forwards both ways.
 * - `reset`: a cut cable with a router that answers: open connections are destroyed (the peer
 *   sees a reset) and new ones are closed as soon as they arrive.
 * - `blackhole`: a cut cable with nothing answering: connections stay open but no byte moves
 *   either way, and new connections are accepted but never reach the target, so a client only
 *   notices through its own timeouts.
 */
export type ProxyMode = 'pass' | 'reset' | 'blackhole';

/**
 * A loopback TCP proxy in front of one target, to partition a client from a server in tests.
 * Listens on 127.0.0.1 on a free port.
 */
export class TcpProxy {
  #server: Server;
  #mode: ProxyMode = 'pass';
  readonly #pairs = new Set<[Socket, Socket | undefined]>();
  #port = 0;
  readonly #retryRefusedMs: number;
  #refusals = 0;
  #answerDelayMs = 0;

  private constructor(
    /** The host traffic is forwarded to. */
    readonly targetHost: string,
    /** The port traffic is forwarded to. */
    readonly targetPort: number,
    retryRefusedMs: number,
  ) {
    this.#retryRefusedMs = retryRefusedMs;
    this.#server = createServer((client) => this.#accept(client));
  }

  /**
   * Starts a proxy to `target` (`http://host:port` or `host:port`).
   *
   * A client's connection is accepted before the proxy dials the target, so a target that
   * refuses shows the client a connection that opens and then drops, where without the proxy
   * its connect would have been refused. Most clients treat both as "not there", but some do
   * not: a ZooKeeper follower retries a refused connect to its new leader, yet takes a dropped
   * one for a failed leader and starts a new election, which the leader ignores until its
   * initLimit runs out (10 s each time on the test ensembles). `retryRefusedMs` keeps dialling
   * a refusing target for that long, holding what the client sent meanwhile, so that a
   * target opening its port late looks like a slow one. Default 0: a refusal drops the client.
   */
  static async start(target: string, options: { retryRefusedMs?: number } = {}): Promise<TcpProxy> {
    const url = new URL(target.includes('://') ? target : `tcp://${target}`);
    const proxy = new TcpProxy(url.hostname, Number(url.port), options.retryRefusedMs ?? 0);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = proxy.#server.address();
    proxy.#port = typeof address === 'object' && address ? address.port : 0;
    return proxy;
  }

  /** `http://127.0.0.1:<port>`: give this to the client instead of the target. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** How traffic is treated now; starts as `pass`. */
  get mode(): ProxyMode {
    return this.#mode;
  }

  /** How many dials of the target it refused so far, retried or not. */
  get refusals(): number {
    return this.#refusals;
  }

  /** Open client connections. */
  get connections(): number {
    return this.#pairs.size;
  }

  /** How long the target's answers are held back before reaching the client, in ms (0: not at all). */
  get answerDelayMs(): number {
    return this.#answerDelayMs;
  }

  /**
   * Holds every byte the target sends back for `ms` before the client gets it (0 ends the
   * delay): a store that answers slowly, as over a congested link. Requests still reach the
   * target at once, so the target acts on time and only its answers are late, the worst case
   * for a client that dates a keepalive by its sending. Bytes keep their order when the delay
   * changes. Applies to open connections too, from their next byte on.
   */
  delayAnswers(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`delayAnswers: expected ms >= 0, received ${ms}`);
    this.#answerDelayMs = ms;
  }

  /** Switches how traffic is treated; open connections follow at once (see ProxyMode). */
  setMode(mode: ProxyMode): void {
    this.#mode = mode;
    for (const pair of this.#pairs) {
      const [client, upstream] = pair;
      if (mode === 'reset') {
        client.resetAndDestroy();
        upstream?.resetAndDestroy();
        this.#pairs.delete(pair);
      } else if (mode === 'blackhole') {
        client.pause();
        upstream?.pause();
      } else if (upstream) {
        client.resume();
        upstream.resume();
      } else {
        // Accepted during a blackhole: connect it now.
        this.#connect(pair);
        client.resume();
      }
    }
  }

  /** Stops listening and destroys every connection. */
  async close(): Promise<void> {
    this.setMode('reset');
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    client.on('error', () => undefined);
    if (this.#mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const pair: [Socket, Socket | undefined] = [client, undefined];
    this.#pairs.add(pair);
    client.once('close', () => {
      pair[1]?.destroy();
      this.#pairs.delete(pair);
    });
    if (this.#mode === 'blackhole') {
      // Accepted, never connected onwards: bytes from the client wait in its buffer.
      client.pause();
      return;
    }
    this.#connect(pair);
  }

  #connect(pair: [Socket, Socket | undefined]): void {
    const [client] = pair;
    const since = performance.now();
    // What the client sent before the target answered: written once it has (a retried dial
    // starts on a new socket, so nothing may be handed to one that was refused).
    const early: Buffer[] = [];
    let upstream: Socket | undefined;
    // Moved by hand rather than piped: pipe() would resume a socket that a blackhole paused.
    client.on('data', (chunk: Buffer) => (upstream?.writable ? upstream.write(chunk) : early.push(chunk)));
    const dial = () => {
      if (client.destroyed) return;
      // The cable was cut while the target was being retried: the client sees a reset.
      if (this.#mode !== 'pass') return void client.resetAndDestroy();
      const socket = createConnection({ host: this.targetHost, port: this.targetPort });
      pair[1] = socket;
      let retrying = false;
      socket.once('connect', () => {
        upstream = socket;
        for (const chunk of early.splice(0)) socket.write(chunk);
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        const refused = upstream === undefined && error.code === 'ECONNREFUSED';
        if (refused) this.#refusals++;
        retrying = refused && performance.now() - since < this.#retryRefusedMs;
        if (retrying) setTimeout(dial, 50);
        else client.destroy();
      });
      socket.once('close', () => {
        if (!retrying) client.destroy();
      });
      socket.on('data', (chunk: Buffer) => answer(chunk));
    };
    // Answers held back by delayAnswers, in order: one queue, drained by one timer at a time.
    const queue: { due: number; chunk: Buffer }[] = [];
    let scheduled = false;
    const schedule = (ms: number) => {
      scheduled = true;
      setTimeout(drain, ms);
    };
    const drain = () => {
      scheduled = false;
      while (queue.length > 0 && queue[0]!.due <= performance.now()) {
        const { chunk } = queue.shift()!;
        if (!client.destroyed) client.write(chunk);
      }
      if (queue.length > 0) schedule(Math.max(1, queue[0]!.due - performance.now()));
    };
    const answer = (chunk: Buffer) => {
      const delay = this.#answerDelayMs;
      if (delay === 0 && queue.length === 0) return void client.write(chunk);
      // Never before an answer already waiting, whatever the delay is now.
      const due = Math.max(performance.now() + delay, queue.at(-1)?.due ?? 0);
      queue.push({ due, chunk });
      if (!scheduled) schedule(Math.max(0, queue[0]!.due - performance.now()));
    };
    dial();
  }
}
