// A metadata service on a loopback port that speaks IMDSv2 as EC2's does: PUT /latest/api/token
// with a TTL header gives a token; GET /latest/meta-data/... needs that token (401 without it or
// with another). Modes inject the faults a real one can show; nothing here leaves loopback.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ImdsMode =
  | 'ok'
  | 'refuse-token'
  | 'wrong-token'
  | 'garbage-token'
  | 'garbage-address'
  | 'public-address'
  | 'stall'
  | 'huge';

export interface Imds {
  readonly endpoint: string;
  /** Every request seen, as "METHOD path token?". */
  readonly requests: string[];
  mode: ImdsMode;
  address: string;
  close(): Promise<void>;
}

export async function startImds(address = '10.0.3.7'): Promise<Imds> {
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

/** A loopback port with nothing listening: what a host off EC2 sees (a refused connection). */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
