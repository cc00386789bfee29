// A fake EC2 metadata service on a loopback port that speaks IMDSv2 as EC2's does, for testing
// `ec2MachineId` (and code built on it) where no cloud is reachable. PUT /latest/api/token with
// a TTL header gives a token; GET /latest/meta-data/... needs that token (401 without it or with
// another). Modes inject the faults a real one can show. It listens on 127.0.0.1 only: nothing
// here leaves loopback.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the test service behaves: `ok`, or a fault: `refuse-token` (403 on the token PUT),
 * `wrong-token` (401 on every GET), `garbage-token` (an HTML page for a token),
 * `garbage-address` / `public-address` / `huge` (a local-ipv4 that is not a private IPv4, or
 * 5000 bytes), `stall` (never answers).
 */
export type ImdsMode =
  | 'ok'
  | 'refuse-token'
  | 'wrong-token'
  | 'garbage-token'
  | 'garbage-address'
  | 'public-address'
  | 'stall'
  | 'huge';

/** A running test metadata service. */
export interface ImdsTestServer {
  /** Its base URL, `http://127.0.0.1:<port>`: pass it as `ec2MachineId({ endpoint })` or IDS_EC2_ENDPOINT. */
  readonly endpoint: string;
  /** Every request seen, as "METHOD path" plus the token when one was sent. */
  readonly requests: string[];
  /** The behaviour from the next request on. */
  mode: ImdsMode;
  /** What `local-ipv4` answers in mode `ok`. */
  address: string;
  /** Stops listening and drops open connections (stalled ones too). */
  close(): Promise<void>;
}

/** Starts a loopback IMDSv2 service answering `local-ipv4` with `address` (default 10.0.3.7). */
export async function startImdsTestServer(address = '10.0.3.7'): Promise<ImdsTestServer> {
  const tokens = new Set<string>();
  const requests: string[] = [];
  const stalled: ServerResponse[] = [];
  const state = { mode: 'ok' as ImdsMode, address };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const token = req.headers['x-aws-ec2-metadata-token'];
    requests.push(`${req.method} ${req.url}${token ? ` ${token}` : ''}`);
    const send = (status: number, body: string) =>
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    if (state.mode === 'stall') return void stalled.push(res);
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      const ttl = Number(req.headers['x-aws-ec2-metadata-token-ttl-seconds']);
      if (!(ttl >= 1 && ttl <= 21_600)) return send(400, 'Bad Request');
      if (state.mode === 'refuse-token') return send(403, 'Forbidden');
      if (state.mode === 'garbage-token') return send(200, '<html>captive portal</html>');
      const issued = `AQAEA${Math.random().toString(36).slice(2)}==`;
      tokens.add(issued);
      return send(200, issued);
    }
    if (req.method === 'GET' && req.url?.startsWith('/latest/meta-data/')) {
      const valid = typeof token === 'string' && tokens.has(token) && state.mode !== 'wrong-token';
      if (!valid) return send(401, 'Unauthorized');
      if (req.url !== '/latest/meta-data/local-ipv4') return send(404, 'Not Found');
      if (state.mode === 'garbage-address') return send(200, 'ip-10-0-3-7.ec2.internal');
      if (state.mode === 'public-address') return send(200, '203.0.113.50');
      if (state.mode === 'huge') return send(200, '1'.repeat(5000));
      return send(200, state.address);
    }
    send(405, 'Method Not Allowed');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    get address() {
      return state.address;
    },
    set address(value) {
      state.address = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of stalled) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The endpoint of a loopback port with nothing listening: what a host off EC2 sees (a refused connection). */
export async function closedLoopbackEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
