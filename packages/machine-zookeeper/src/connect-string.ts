import { isIPv6 } from 'node:net';
import { InvalidArgumentError } from '@ids/engine';
import { received } from '@ids/engine/internal';

/** One server of a connect string, as a socket dials it. */
export interface ZkEndpoint {
  /** A host name or IP address; an IPv6 address without its brackets (`::1`). */
  readonly host: string;
  /** 1 to 65535. */
  readonly port: number;
}

/** A connect string checked: the servers and the chroot, if any. */
export interface ConnectString {
  /** `host:port` of each server, as given (`[::1]:2181` keeps its brackets). */
  readonly servers: readonly string[];
  /** Each server as a socket dials it, in the order given. */
  readonly endpoints: readonly ZkEndpoint[];
  /** The chroot (`/apps/ids`), or undefined for none. */
  readonly chroot: string | undefined;
  /** The string as the client takes it. */
  readonly text: string;
}

const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const EXPECTED =
  'expected host:port[,host:port...][/chroot], an IPv6 host in brackets, e.g. 127.0.0.1:2181,[::1]:2182/apps/ids';

/** The host as a socket takes it (an IPv6 address unbracketed), or undefined when it is none. */
function dialHost(host: string): string | undefined {
  if (NAME.test(host)) return host;
  const inner = /^\[(.*)\]$/.exec(host)?.[1];
  return inner !== undefined && isIPv6(inner) ? inner : undefined;
}

/**
 * Checks a ZooKeeper connect string. An IPv6 host is written in brackets (`[::1]:2181`), as
 * ZooKeeper's own clients take it. The client would take a server without a port as 2181
 * and an unparsable port as NaN, and fail later with a message about sockets: every server
 * here must say its port, 1 to 65535. A chroot is a path without a trailing slash or empty
 * segments (the server refuses those too, but only once connected).
 *
 * @throws InvalidArgumentError naming `option`.
 */
export function parseConnectString(value: unknown, option = 'connect'): ConnectString {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidArgumentError(`${EXPECTED}, received ${received(value)}`, { option });
  }
  const slash = value.indexOf('/');
  const hosts = slash === -1 ? value : value.slice(0, slash);
  const chroot = slash === -1 ? undefined : value.slice(slash);
  const servers = hosts.split(',');
  const endpoints = servers.map((server): ZkEndpoint => {
    // The port follows the last colon outside brackets: an IPv6 host holds colons of its own.
    const colon = server.lastIndexOf(':') > server.lastIndexOf(']') ? server.lastIndexOf(':') : -1;
    const host = dialHost(colon === -1 ? server : server.slice(0, colon));
    const port = colon === -1 ? '' : server.slice(colon + 1);
    if (host === undefined) {
      throw new InvalidArgumentError(
        `${EXPECTED}, received ${received(value)} (server ${received(server)} has no valid host)`,
        { option },
      );
    }
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65_535) {
      throw new InvalidArgumentError(
        `${EXPECTED}, received ${received(value)} (server ${received(server)}: the port must be 1 to 65535)`,
        { option },
      );
    }
    return { host, port: Number(port) };
  });
  if (chroot !== undefined && (chroot === '/' || !isPath(chroot))) {
    throw new InvalidArgumentError(
      `${EXPECTED}: the chroot must be an absolute path without a trailing slash or empty segments, received ${received(chroot)}`,
      { option },
    );
  }
  return { servers, endpoints, chroot, text: value };
}

/** An absolute ZooKeeper path: `/a/b`, no empty segment, no `.` or `..`, no trailing slash. */
export function isPath(path: string): boolean {
  if (path === '/') return true;
  if (!path.startsWith('/') || path.endsWith('/')) return false;
  return path
    .slice(1)
    .split('/')
    .every(
      (segment) =>
        segment !== '' &&
        segment !== '.' &&
        segment !== '..' &&
        ![...segment].some((c) => c < ' ' || c === '\u007f'),
    );
}
