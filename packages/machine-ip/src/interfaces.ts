// The rule shared by the IPv4 and IPv6 providers: which interface addresses are candidates,
// which are never taken (loopback, well-known virtual bridges), and which candidate wins when
// there are several. Each answer says what was seen and why the winner won.
import { InvalidArgumentError } from '@ids/engine';
import { errorText } from '@ids/engine/internal';
import { isAddress, isLoopback } from './address.js';
import { builtin } from './builtins.js';
import { InterfaceListError, received } from './errors.js';
import { defaultRouteInterfaces, procRoutes, type RouteFamily, type RouteSource } from './routes.js';

/** One address of an interface, as `os.networkInterfaces()` lists it. */
export interface InterfaceAddress {
  /** The address as text: IPv4 dotted, or IPv6 (an IPv4-mapped one counts as IPv4). Invalid text is skipped. */
  readonly address: string;
  /** 'IPv4' or 'IPv6' (4 or 6 on some Node 18 releases). Not read: the address itself says which. */
  readonly family: string | number;
  /** True for loopback interfaces, which are skipped. */
  readonly internal: boolean;
}

/** Interfaces by name, in the order the OS reports them (the shape of `os.networkInterfaces()`). */
export type InterfaceList = Readonly<Record<string, readonly InterfaceAddress[] | undefined>>;

/** Where the interface list comes from; tests pass their own. */
export type InterfaceSource = () => InterfaceList;

/** How the address providers find their address; every field has a default. */
export interface AddressOptions {
  /** The interface list (default `os.networkInterfaces`); anything but a function is InvalidArgumentError. */
  readonly interfaces?: InterfaceSource;
  /** The route tables, read only when there are several candidates (default: /proc/net/route, /proc/net/ipv6_route). */
  readonly routes?: RouteSource;
  /**
   * Also take addresses of well-known virtual bridges (docker0, cni0, virbr0, br-*, podman*).
   * Default false: such a bridge has the same address on every host that runs it.
   */
  readonly includeBridges?: boolean;
}

/** An address that could be the machine's, and the interface it is on. */
export interface Candidate {
  /** The interface name, as the OS lists it. */
  readonly interface: string;
  /** The address, in canonical form. */
  readonly address: string;
}

/** The address a provider settled on, with what it saw and why this one. */
export interface AddressChoice extends Candidate {
  /** Every candidate, in OS order (the winner among them). */
  readonly candidates: readonly Candidate[];
  /** Addresses of the right kind left out because their interface is a virtual bridge. */
  readonly bridges: readonly Candidate[];
  /** Why this one won, in a sentence: the only candidate, the default route's, or the first in OS order. */
  readonly why: string;
}

// docker0 (Docker), cni0 (CNI bridge plugin), virbr0 (libvirt), br-<id> (Docker user networks),
// podman* (Podman): each hands the same subnet, so the same address, to every host running it.
const BRIDGE = /^(docker\d+|cni\d+|virbr\d+|br-.+|podman.*)$/;

/** True for the name of a well-known virtual bridge, whose address is the same on every host that has it. */
export function isVirtualBridge(name: string): boolean {
  return BRIDGE.test(name);
}

/** What one address family's rule needs: its name, which addresses count, and the error for none. */
export interface AddressRule {
  /** Which route table breaks a tie. */
  readonly family: RouteFamily;
  /** Candidates, in words ("private IPv4"). */
  readonly noun: string;
  /** The address as shown, when the (valid, non-loopback) address is a candidate; else undefined. */
  accepts(address: string): string | undefined;
  /** The error when nothing qualifies; `found` lists what was seen. */
  none(found: string): Error;
}

/** The host's interfaces, as `os.networkInterfaces()` lists them (node:os is loaded on first use). */
const hostInterfaces: InterfaceSource = () => builtin('node:os').networkInterfaces();

/** Checks the options at once, so a bad one fails where it is written rather than later. */
export function checkAddressOptions(options: AddressOptions): Required<AddressOptions> {
  const { interfaces = hostInterfaces, routes = procRoutes, includeBridges = false } = options;
  if (typeof interfaces !== 'function') {
    throw new InvalidArgumentError(
      `interfaces: expected a function returning an interface list, received ${received(interfaces)}`,
    );
  }
  if (typeof routes !== 'function') {
    throw new InvalidArgumentError(
      `routes: expected a function returning a route table, received ${received(routes)}`,
    );
  }
  if (typeof includeBridges !== 'boolean') {
    throw new InvalidArgumentError(
      `includeBridges: expected a boolean, received ${received(includeBridges)}`,
    );
  }
  return { interfaces, routes, includeBridges };
}

function listInterfaces(source: InterfaceSource): InterfaceList {
  let list: unknown;
  try {
    list = source();
  } catch (error) {
    throw new InterfaceListError(`listing the network interfaces failed: ${errorText(error)}`, {
      cause: error,
    });
  }
  return checkInterfaceList(list);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A list given by the caller is checked before any rule reads it, so that a wrong shape is
 * named (which interface, which entry, which field) instead of surfacing as a TypeError deep in
 * the address parsing. `family` is not read, but a wrong type there means a wrong shape too.
 */
function checkInterfaceList(list: unknown): InterfaceList {
  const wrong = (at: string, expected: string, value: unknown) =>
    new InterfaceListError(`the interface list${at}: expected ${expected}, received ${received(value)}`);
  if (!isObject(list)) {
    throw wrong(
      '',
      'an object of interface name to address entries (as os.networkInterfaces() returns)',
      list,
    );
  }
  for (const [name, entries] of Object.entries(list)) {
    const at = `[${JSON.stringify(name)}]`;
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) throw wrong(at, 'an array of address entries', entries);
    entries.forEach((entry: unknown, i) => {
      if (!isObject(entry)) throw wrong(`${at}[${i}]`, 'an object { address, family, internal }', entry);
      if (typeof entry.address !== 'string') throw wrong(`${at}[${i}].address`, 'a string', entry.address);
      if (typeof entry.internal !== 'boolean')
        throw wrong(`${at}[${i}].internal`, 'a boolean', entry.internal);
      if (typeof entry.family !== 'string' && typeof entry.family !== 'number') {
        throw wrong(`${at}[${i}].family`, "'IPv4' or 'IPv6' (or 4 or 6)", entry.family);
      }
    });
  }
  return list as InterfaceList;
}

const named = (c: Candidate) => `${c.address} (${c.interface})`;

/**
 * Applies a rule to the host's interfaces: the one candidate if there is one (Go's rule), else
 * the first candidate on the interface carrying the default route, else the first in OS order.
 * @throws InterfaceListError when listing fails; the rule's error when no candidate is left.
 */
export function chooseAddress(rule: AddressRule, options: Required<AddressOptions>): AddressChoice {
  const candidates: Candidate[] = [];
  const bridges: Candidate[] = [];
  const others: string[] = [];
  for (const [name, addresses] of Object.entries(listInterfaces(options.interfaces))) {
    for (const entry of addresses ?? []) {
      if (entry.internal || !isAddress(entry.address) || isLoopback(entry.address)) continue;
      const address = rule.accepts(entry.address);
      if (address === undefined) others.push(entry.address);
      else if (isVirtualBridge(name) && !options.includeBridges) bridges.push({ interface: name, address });
      else candidates.push({ interface: name, address });
    }
  }
  const skipped = bridges.length
    ? `; left out ${bridges.map(named).join(', ')}: a virtual bridge has the same address on every host`
    : '';
  if (candidates.length === 0) {
    const found = [
      ...others,
      ...bridges.map((b) => `${b.address} (${b.interface}, a virtual bridge: left out)`),
    ];
    throw rule.none(found.length ? found.join(', ') : 'none besides loopback');
  }
  const pick = (winner: Candidate, why: string): AddressChoice => ({
    ...winner,
    candidates,
    bridges,
    why: why + skipped,
  });
  if (candidates.length === 1) return pick(candidates[0]!, `the only ${rule.noun} address`);

  const seen = `${candidates.length} ${rule.noun} addresses (${candidates.map(named).join(', ')})`;
  let defaults: string[];
  try {
    defaults = defaultRouteInterfaces(options.routes(rule.family), rule.family);
  } catch (error) {
    const reason = errorText(error);
    return pick(
      candidates[0]!,
      `${seen}; the route table could not be read (${reason}): the first in OS order, as Go`,
    );
  }
  for (const iface of defaults) {
    const winner = candidates.find((c) => c.interface === iface);
    if (winner) return pick(winner, `${seen}; ${iface} carries the default route`);
  }
  const via = defaults.length
    ? `the default route is via ${defaults.join(', ')}`
    : 'there is no default route';
  return pick(
    candidates[0]!,
    `${seen}; none is on the default route's interface (${via}): the first in OS order, as Go`,
  );
}
