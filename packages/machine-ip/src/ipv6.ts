// Machine IDs on IPv6-only hosts: the interface identifier of a unique-local address
// (fc00::/7), taken only when it fits the machine field whole. An address plan that numbers
// hosts (static, DHCPv6: fd00::2, fd00::1:17) gives small identifiers, unique where the plan
// is; SLAAC's random or MAC-derived identifiers use all 64 bits and are refused rather than cut.
import type { MachineIdProvider } from '@ids/engine';
import { ipv6Groups, isUniqueLocalGroups } from './address.js';
import { MachineIdDoesNotFitError, NoUniqueLocalAddressError } from './errors.js';
import {
  type AddressChoice,
  type AddressOptions,
  type AddressRule,
  checkAddressOptions,
  chooseAddress,
} from './interfaces.js';
import { bitsNeeded } from './ipv4.js';

const UNIQUE_LOCAL: AddressRule = {
  family: 'IPv6',
  noun: 'unique-local IPv6',
  accepts: (address) => {
    const groups = ipv6Groups(address);
    return groups && isUniqueLocalGroups(groups) ? address.split('%')[0]!.toLowerCase() : undefined;
  },
  none: (found) =>
    new NoUniqueLocalAddressError(
      `no unique-local IPv6 address: expected an interface address in fc00::/7, found ${found}. Give the machine ID explicitly (machineId, IDS_MACHINE_ID) or use a host claim or @ids/machine-etcd`,
    ),
};

/**
 * The host's unique-local IPv6 address, chosen by the same rule as `choosePrivateIPv4`.
 * @throws InvalidArgumentError for bad options; NoUniqueLocalAddressError naming what was seen;
 * InterfaceListError when listing the interfaces fails.
 */
export function chooseUniqueLocalIpv6(options: AddressOptions = {}): AddressChoice {
  return chooseAddress(UNIQUE_LOCAL, checkAddressOptions(options));
}

/** The low 64 bits (the interface identifier) of an IPv6 address in canonical text. */
export function interfaceIdentifier(address: string): bigint {
  const groups = ipv6Groups(address) ?? [];
  return groups.slice(4).reduce((id, group) => (id << 16n) | BigInt(group), 0n);
}

/**
 * The rule on a given IPv6 address: its interface identifier, whole.
 * @throws MachineIdDoesNotFitError when the identifier needs more than `bits` bits.
 */
export function ipv6MachineId(address: string, bits: number): number {
  const id = interfaceIdentifier(address);
  if (id >= 2n ** BigInt(bits)) {
    throw new MachineIdDoesNotFitError(
      `the unique-local address ${address} has interface identifier 0x${id.toString(16)}, which needs ${bitsNeeded(id)} bits; the layout's machine field has ${bits}. Only planned identifiers (static or DHCPv6, like fd00::2) are used, never the low bits of a SLAAC one`,
    );
  }
  return Number(id);
}

/**
 * A machine ID from the interface identifier of the host's unique-local IPv6 address (fd00::2
 * gives 2). Opt-in: it is unique only where identifiers are assigned by a plan (static or
 * DHCPv6), so an identifier that does not fit the machine field (SLAAC's random or MAC-derived
 * ones) is refused, never cut down to its low bits.
 *
 * @throws InvalidArgumentError at once for bad options. The provider throws
 * NoUniqueLocalAddressError, InterfaceListError, or MachineIdDoesNotFitError.
 */
export function uniqueLocalIpv6MachineId(options: AddressOptions = {}): MachineIdProvider {
  const checked = checkAddressOptions(options);
  return ({ bits }) => ipv6MachineId(chooseAddress(UNIQUE_LOCAL, checked).address, bits);
}
