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

  private constructor(
    /** The host traffic is forwarded to. */
    readonly targetHost: string,
    /** The port traffic is forwarded to. */
    readonly targetPort: number,
  ) {
    this.#server = createServer((client) => this.#accept(client));
  }

  /** Starts a proxy to `target` (`http://host:port` or `host:port`). */
  static async start(target: string): Promise<TcpProxy> {
    const url = new URL(target.includes('://') ? target : `tcp://${target}`);
    const proxy = new TcpProxy(url.hostname, Number(url.port));
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

  /** Open client connections. */
  get connections(): number {
    return this.#pairs.size;
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
    const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
    pair[1] = upstream;
    upstream.on('error', () => client.destroy());
    upstream.once('close', () => client.destroy());
    // Moved by hand rather than piped: pipe() would resume a socket that a blackhole paused.
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => client.write(chunk));
  }
}
