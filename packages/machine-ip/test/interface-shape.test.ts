// Issue 22 item 5: an injected interface list of the wrong shape is a typed error naming the
// interface, the entry and the field, from every provider that reads interfaces (before the fix
// an IPv6 entry whose address was a number threw a bare TypeError from the address parser).
import { describe, expect, it } from 'vitest';
import {
  choosePrivateIPv4,
  chooseUniqueLocalIpv6,
  InterfaceListError,
  type InterfaceSource,
  privateIPv4,
  privateIpMachineId,
  uniqueLocalIpv6MachineId,
} from '../src/index.js';
import { v4, v6 } from './helpers.js';

// Each provider that takes an injected list, run once on it.
const PROVIDERS: [string, (interfaces: InterfaceSource) => unknown][] = [
  ['uniqueLocalIpv6MachineId', (interfaces) => uniqueLocalIpv6MachineId({ interfaces })({ bits: 16 })],
  ['chooseUniqueLocalIpv6', (interfaces) => chooseUniqueLocalIpv6({ interfaces })],
  ['privateIpMachineId', (interfaces) => privateIpMachineId({ interfaces })({ bits: 16 })],
  ['choosePrivateIPv4', (interfaces) => choosePrivateIPv4({ interfaces })],
  ['privateIPv4', (interfaces) => privateIPv4(interfaces)],
];

// [what is wrong, the list, the text the message must hold]
const BAD: [string, unknown, string][] = [
  [
    'address a number',
    { eth0: [v6('fd00::2')], eth1: [{ family: 'IPv6', internal: false, address: 17 }] },
    'the interface list["eth1"][0].address: expected a string, received 17 (number)',
  ],
  [
    'address missing',
    { eth0: [v4('10.0.0.1'), { family: 'IPv4', internal: false }] },
    'the interface list["eth0"][1].address: expected a string, received undefined',
  ],
  [
    'address null',
    { eth0: [{ family: 'IPv6', internal: false, address: null }] },
    'the interface list["eth0"][0].address: expected a string, received null',
  ],
  [
    'the list an array',
    [v6('fd00::2')],
    'the interface list: expected an object of interface name to address entries (as os.networkInterfaces() returns), received an array of length 1',
  ],
  ['the list null', null, 'the interface list: expected an object of interface name'],
  ['the list a string', 'eth0', 'received "eth0" (string)'],
  [
    "an interface's entries not an array",
    { eth0: v6('fd00::2') },
    'the interface list["eth0"]: expected an array of address entries, received a value of type object',
  ],
  [
    'an entry not an object',
    { eth0: ['fd00::2'] },
    'the interface list["eth0"][0]: expected an object { address, family, internal }, received "fd00::2" (string)',
  ],
  [
    'family of the wrong type',
    { eth0: [{ address: 'fd00::2', family: true, internal: false }] },
    "the interface list[\"eth0\"][0].family: expected 'IPv4' or 'IPv6' (or 4 or 6), received a value of type boolean",
  ],
  [
    'internal not a boolean',
    { eth0: [{ address: 'fd00::2', family: 'IPv6', internal: 'no' }] },
    'the interface list["eth0"][0].internal: expected a boolean, received "no" (string)',
  ],
];

describe('an injected interface list of the wrong shape', () => {
  for (const [provider, run] of PROVIDERS) {
    for (const [what, value, text] of BAD) {
      it(`${provider}: ${what} is InterfaceListError naming the field`, () => {
        let thrown: unknown;
        try {
          run(() => value as never);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(InterfaceListError);
        expect((thrown as InterfaceListError).code).toBe('ERR_IDS_INTERFACE_LIST');
        expect((thrown as Error).message).toContain(text);
      });
    }
  }

  it('Node 18 numeric families and missing interfaces are still the right shape', () => {
    const list = { lo: undefined, eth0: [{ address: 'fd00::2', family: 6, internal: false }] };
    expect(uniqueLocalIpv6MachineId({ interfaces: () => list })({ bits: 16 })).toBe(2);
  });
});
