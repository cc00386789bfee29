// Go Sonyflake's default machine ID: the low 16 bits of the host's private IPv4 address, with
// the tie-break for hosts that have several (see interfaces.ts).
import type { MachineIdProvider } from '@ids/engine';
import { ipv4Octets, isPrivateOctets } from './address.js';
import { MachineIdDoesNotFitError, NoPrivateAddressError } from './errors.js';
import {
  type AddressChoice,
  type AddressOptions,
  type AddressRule,
  checkAddressOptions,
  chooseAddress,
  type InterfaceSource,
} from './interfaces.js';
import type { RouteSource } from './routes.js';

/** True for an IPv4 address (or IPv4-mapped IPv6 address) Go's Sonyflake counts as private. */
export function isPrivateIPv4(address: string): boolean {
  const octets = ipv4Octets(address);
  return octets !== undefined && isPrivateOctets(octets);
}

const PRIVATE_IPV4: AddressRule = {
  family: 'IPv4',
  noun: 'private IPv4',
  accepts: (address) => {
    const octets = ipv4Octets(address);
    return octets && isPrivateOctets(octets) ? octets.join('.') : undefined;
  },
  none: (found) =>
    new NoPrivateAddressError(
      `no private ip address: expected an interface address in 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 or 169.254.0.0/16, found ${found}`,
    ),
};

/**
 * The host's private IPv4 address, what else was seen, and why it won: the only one (Go's
 * rule), else the one on the interface carrying the default route, else the first in OS order.
 * Addresses of virtual bridges (docker0, cni0, virbr0, br-*, podman*) are left out unless
 * `includeBridges`.
 *
 * @throws InvalidArgumentError for bad options; NoPrivateAddressError when no candidate is left
 * (naming every address seen); InterfaceListError when listing the interfaces fails.
 */
export function choosePrivateIPv4(options: AddressOptions = {}): AddressChoice {
  return chooseAddress(PRIVATE_IPV4, checkAddressOptions(options));
}

/**
 * The host's private IPv4 address (Go's `privateIPv4`), chosen as `choosePrivateIPv4` does.
 *
 * @throws NoPrivateAddressError when the host has none (Docker's default network, most VPSs,
 * IPv6-only hosts); InterfaceListError when listing the interfaces fails.
 */
export function privateIPv4(interfaces?: InterfaceSource, routes?: RouteSource): string {
  return choosePrivateIPv4({ ...(interfaces && { interfaces }), ...(routes && { routes }) }).address;
}

/** Go's `lower16BitPrivateIP`: the third octet times 256 plus the fourth. 192.168.0.1 -> 1. */
export function lower16BitPrivateIP(interfaces?: InterfaceSource, routes?: RouteSource): number {
  return lower16Bits(privateIPv4(interfaces, routes));
}

/** The third octet times 256 plus the fourth, of a dotted IPv4 address. */
export function lower16Bits(address: string): number {
  const octets = address.split('.').map(Number);
  return (octets[2]! << 8) | octets[3]!;
}

/** Bits needed to write a non-negative integer (at least 1). */
export function bitsNeeded(id: number | bigint): number {
  return Math.max(1, BigInt(id).toString(2).length);
}

/** Throws MachineIdDoesNotFitError when `id` needs more than `bits` bits; `what` says where it came from. */
export function checkFits(id: number, bits: number, what: string): number {
  if (id >= 2 ** bits) {
    throw new MachineIdDoesNotFitError(
      `${what} gives machine ID ${id}, which needs ${bitsNeeded(id)} bits; the layout's machine field has ${bits}`,
    );
  }
  return id;
}

/**
 * Go's rule on a given private IPv4 address: its low 16 bits, refused when they do not fit.
 * @throws MachineIdDoesNotFitError when the ID needs more than `bits` bits.
 */
export function ipv4MachineId(address: string, bits: number): number {
  return checkFits(lower16Bits(address), bits, `the private address ${address}`);
}

/** How `privateIpMachineId` finds the address (the options of `choosePrivateIPv4`), and what it advises. */
export interface PrivateIpOptions extends AddressOptions {
  /**
   * What to do instead, appended to NoPrivateAddressError's message: the caller knows which
   * settings its user has (a setting, a CLI flag, an environment variable). Default PRIVATE_IP_HINT.
   */
  readonly hint?: string;
}

/** The advice for a library caller that built the provider itself. */
export const PRIVATE_IP_HINT =
  'give the machine ID explicitly (the machineId setting), or a provider from @ids/machine-file or @ids/machine-etcd';

/**
 * The default machine ID of Go's Sonyflake: the low 16 bits of the host's private IPv4 address
 * (see `choosePrivateIPv4` for which one when there are several). Unlike Go (issue #82), it is
 * told the machine field's width and fails with MachineIdDoesNotFitError instead of handing the
 * generator an ID that cannot fit.
 *
 * @throws InvalidArgumentError at once for bad options. The provider throws
 * NoPrivateAddressError, InterfaceListError, or MachineIdDoesNotFitError (an ID of 2^bits or more).
 */
export function privateIpMachineId(options: PrivateIpOptions = {}): MachineIdProvider {
  const checked = checkAddressOptions(options);
  const hint = options.hint ?? PRIVATE_IP_HINT;
  return ({ bits }) => {
    let choice: AddressChoice;
    try {
      choice = chooseAddress(PRIVATE_IPV4, checked);
    } catch (error) {
      if (error instanceof NoPrivateAddressError)
        throw new NoPrivateAddressError(`${error.message}; ${hint}`);
      throw error;
    }
    return ipv4MachineId(choice.address, bits);
  };
}
