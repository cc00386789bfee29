// Which interface carries the default route, read from the kernel's route tables in /proc: a
// file read of a few hundred bytes, no subprocess and no dependency. It is read only when a
// host has several candidate addresses, so the usual one-address host never touches it.
import { builtin } from './builtins.js';

/** Which route table: the IPv4 one (/proc/net/route) or the IPv6 one (/proc/net/ipv6_route). */
export type RouteFamily = 'IPv4' | 'IPv6';

/** The kernel's route table for a family, as the text of its /proc file; tests pass their own. */
export type RouteSource = (family: RouteFamily) => string;

/** Reads /proc/net/route or /proc/net/ipv6_route (Linux); elsewhere it throws, and the caller says so. */
export const procRoutes: RouteSource = (family) =>
  builtin('node:fs').readFileSync(family === 'IPv4' ? '/proc/net/route' : '/proc/net/ipv6_route', 'utf8');

const RTF_UP = 0x1;
const RTF_REJECT = 0x200;

interface DefaultRoute {
  readonly iface: string;
  readonly metric: number;
}

// /proc/net/route: a header line, then "Iface Destination Gateway Flags RefCnt Use Metric Mask
// ...", addresses and flags in hex. A default route has destination and mask 0 and is up.
function ipv4Defaults(text: string): DefaultRoute[] {
  const routes: DefaultRoute[] = [];
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 8 || cols[0] === 'Iface') continue;
    const flags = Number.parseInt(cols[3]!, 16);
    if (cols[1] === '00000000' && cols[7] === '00000000' && flags & RTF_UP) {
      routes.push({ iface: cols[0]!, metric: Number(cols[6]) });
    }
  }
  return routes;
}

// /proc/net/ipv6_route: no header; "dest plen src splen nexthop metric refcnt use flags iface",
// all hex. The kernel lists an unreachable ::/0 on lo (RTF_REJECT): not a way out.
function ipv6Defaults(text: string): DefaultRoute[] {
  const routes: DefaultRoute[] = [];
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10) continue;
    const flags = Number.parseInt(cols[8]!, 16);
    if (/^0{32}$/.test(cols[0]!) && cols[1] === '00' && flags & RTF_UP && !(flags & RTF_REJECT)) {
      routes.push({ iface: cols[9]!, metric: Number.parseInt(cols[5]!, 16) });
    }
  }
  return routes;
}

/** The interfaces that carry a default route in this table, lowest metric (the preferred one) first. */
export function defaultRouteInterfaces(text: string, family: RouteFamily): string[] {
  const routes = family === 'IPv4' ? ipv4Defaults(text) : ipv6Defaults(text);
  return routes.sort((a, b) => a.metric - b.metric).map((r) => r.iface);
}
