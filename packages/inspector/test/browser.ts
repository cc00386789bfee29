// What the browser tests share: the page served on loopback, and Debian's Chromium driven by
// playwright-core (scripts/ensure-services.mjs installs it when missing).
import { accessSync, constants } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The executable, found as scripts/ensure-services.mjs finds it: CHROMIUM_BIN, Debian's, PATH. */
export const CHROMIUM =
  process.env.CHROMIUM_BIN ??
  [
    '/usr/bin/chromium',
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'chromium')),
  ].find(executable) ??
  '/usr/bin/chromium';

/** Headless, no sandbox (the tests run as root), and no traffic of the browser's own. */
export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A server on 127.0.0.1 that answers GET / with the page and 404 otherwise, and logs every request. */
export interface PageServer {
  /** http://127.0.0.1:PORT/ */
  readonly url: string;
  /** Method and path of each request, in order. */
  readonly requests: string[];
  /** Stops it. */
  close(): Promise<void>;
}

/** Serves `html` at / on a free loopback port. */
export async function servePage(html: string): Promise<PageServer> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    if (request.method === 'GET' && request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(html);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
