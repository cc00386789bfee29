/// <reference path="./zk.d.ts" />
import type * as zk from 'node-zookeeper-client';
import type { ConnectString } from './connect-string.js';

// How a session's underlying client is dialled and ended: two places where node-zookeeper-
// client's connection manager does the wrong thing for us (IPv6 servers, closing while not
// connected) and is steered from outside. ZkSession uses these and nothing else touches it.

/** The library's connection states this file needs (ConnectionManager.STATES). */
export const CONNECTED = 2;
const CLOSING = -1;

/**
 * Ends a client that has no live connection (still connecting, or reconnecting) without its
 * `close()`. That one is safe only when connected: it queues a close-session request and marks
 * the client closing, and the server's answer to a connect request then in flight is parsed as
 * an ordinary reply, whose garbage error code the library throws from its socket handler,
 * killing the process (seen with 40 processes claiming at once, whose connects timed out).
 * Here the client is marked closing, its socket destroyed (nothing more is read), and its
 * reconnect disabled, so no further socket is opened. The server forgets a session it never
 * granted, or expires one it did.
 */
function abandon(client: zk.Client): void {
  const manager = client.connectionManager;
  manager.connect = () => undefined;
  manager.setState(CLOSING);
  manager.socket?.destroy();
}

/**
 * Makes the client dial the servers as parseConnectString read them. The library splits each
 * server on every `:` and dials the first piece, so `[::1]:2181` became host `[` (nothing
 * listening) and an IPv6 server could not be reached at all. Its list of `{ host, port }` is
 * what it hands `net.connect`; the same servers go in, shuffled as the library shuffles them
 * (each client of an ensemble then starts at a different server). The count is unchanged, so
 * the library's connect timeout per server (session timeout / servers) stays what it computed.
 */
export function dialEndpoints(client: zk.Client, where: ConnectString): void {
  client.connectionManager.servers = where.endpoints
    .map(({ host, port }) => ({ host, port, order: Math.random() }))
    .sort((a, b) => a.order - b.order)
    .map(({ host, port }) => ({ host, port }));
}

/** Closes a client the right way for its state (see `abandon`). */
export function shut(client: zk.Client): void {
  if (client.connectionManager.state === CONNECTED) client.close();
  else abandon(client);
}
