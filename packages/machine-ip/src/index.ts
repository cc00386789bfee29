import { networkInterfaces } from 'node:os';
import { IdsError, InvalidArgumentError, type MachineIdProvider } from '@ids/engine';
import { received } from '@ids/engine/internal';
import { ipv4Octets, isAddress, isLoopback, isPrivateOctets } from './address.js';

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

/** Go: ErrNoPrivateAddress ("no private ip address"). */
export class NoPrivateAddressError extends IdsError {
  readonly code = 'ERR_IDS_NO_PRIVATE_ADDRESS';
  override readonly name = 'NoPrivateAddressError';
}

/** The address gives a machine ID wider than the layout's machine field (Go issue #82). */
export class MachineIdDoesNotFitError extends IdsError {
  readonly code = 'ERR_IDS_MACHINE_ID_DOES_NOT_FIT';
  override readonly name = 'MachineIdDoesNotFitError';
}

/** Listing the interfaces failed (Go passes the error of `net.InterfaceAddrs` through); `cause` holds it. */
export class InterfaceListError extends IdsError {
  readonly code = 'ERR_IDS_INTERFACE_LIST';
  override readonly name = 'InterfaceListError';
}

/** True for an IPv4 address (or IPv4-mapped IPv6 address) Go's Sonyflake counts as private. */
export function isPrivateIPv4(address: string): boolean {
  const octets = ipv4Octets(address);
  return octets !== undefined && isPrivateOctets(octets);
}

function listInterfaces(source: InterfaceSource): InterfaceList {
  try {
    return source();
  } catch (error) {
    throw new InterfaceListError(
      `listing the network interfaces failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/**
 * The first private IPv4 address in OS order, skipping loopback (Go's `privateIPv4`).
 *
 * @throws NoPrivateAddressError when the host has none (Docker's default network, most VPSs,
 * IPv6-only hosts); InterfaceListError when listing the interfaces fails.
 */
export function privateIPv4(interfaces: InterfaceSource = networkInterfaces): string {
  const list = listInterfaces(interfaces);
  const seen: string[] = [];
  for (const addresses of Object.values(list)) {
    for (const entry of addresses ?? []) {
      if (entry.internal || !isAddress(entry.address) || isLoopback(entry.address)) continue;
      const octets = ipv4Octets(entry.address);
      if (octets && isPrivateOctets(octets)) return octets.join('.');
      seen.push(entry.address);
    }
  }
  throw new NoPrivateAddressError(
    `no private ip address: expected an interface address in 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 or 169.254.0.0/16, found ${seen.length ? seen.join(', ') : 'none besides loopback'}`,
  );
}

/** Go's `lower16BitPrivateIP`: the third octet times 256 plus the fourth. 192.168.0.1 -> 1. */
export function lower16BitPrivateIP(interfaces: InterfaceSource = networkInterfaces): number {
  return lower16Bits(privateIPv4(interfaces));
}

function lower16Bits(address: string): number {
  const octets = address.split('.').map(Number);
  return (octets[2]! << 8) | octets[3]!;
}

/** How `privateIpMachineId` finds the address. */
export interface PrivateIpOptions {
  /** The interface list (default `os.networkInterfaces`); anything but a function is InvalidArgumentError. */
  readonly interfaces?: InterfaceSource;
  /**
   * What to do instead, appended to NoPrivateAddressError's message: the caller knows which
   * settings its user has (a setting, a CLI flag, an environment variable). Default: give
   * `machineId` explicitly, or use a provider of @ids/machine-file or @ids/machine-etcd.
   */
  readonly hint?: string;
}

/** The advice for a library caller that built the provider itself. */
export const PRIVATE_IP_HINT =
  'give the machine ID explicitly (the machineId setting), or a provider from @ids/machine-file or @ids/machine-etcd';

/**
 * The default machine ID of Go's Sonyflake: the low 16 bits of the first private IPv4 address.
 * Unlike Go (issue #82), it is told the machine field's width and fails with
 * MachineIdDoesNotFitError instead of handing the generator an ID that cannot fit.
 *
 * @throws InvalidArgumentError at once when `interfaces` is not a function. The provider throws
 * NoPrivateAddressError, InterfaceListError, or MachineIdDoesNotFitError (an ID of 2^bits or more).
 */
export function privateIpMachineId(options: PrivateIpOptions = {}): MachineIdProvider {
  const interfaces = options.interfaces ?? networkInterfaces;
  if (typeof interfaces !== 'function') {
    throw new InvalidArgumentError(
      `interfaces: expected a function returning an interface list, received ${received(interfaces)}`,
    );
  }
  const hint = options.hint ?? PRIVATE_IP_HINT;
  return ({ bits }) => {
    let address: string;
    try {
      address = privateIPv4(interfaces);
    } catch (error) {
      if (error instanceof NoPrivateAddressError)
        throw new NoPrivateAddressError(`${error.message}; ${hint}`);
      throw error;
    }
    const id = lower16Bits(address);
    if (id >= 2 ** bits) {
      throw new MachineIdDoesNotFitError(
        `the private address ${address} gives machine ID ${id}, which needs ${Math.max(1, Math.ceil(Math.log2(id + 1)))} bits; the layout's machine field has ${bits}`,
      );
    }
    return id;
  };
}
