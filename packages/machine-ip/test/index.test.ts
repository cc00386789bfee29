import { describe, expect, it } from 'vitest';
import {
  type InterfaceList,
  InterfaceListError,
  isPrivateIPv4,
  lower16BitPrivateIP,
  MachineIdDoesNotFitError,
  NoPrivateAddressError,
  privateIPv4,
  privateIpMachineId,
} from '../src/index.js';

const v4 = (address: string, internal = false) => ({ address, family: 'IPv4', internal });
const v6 = (address: string) => ({ address, family: 'IPv6', internal: false });
const list = (interfaces: InterfaceList) => () => interfaces;

// Go's mocks (v2/mock/mock.go): a failing lister, an empty list, and one 192.168.0.1 address.
const GO_MOCK_FAILING = () => {
  throw new Error('failed to get addresses');
};
const GO_MOCK_EMPTY = list({});
const GO_MOCK_SUCCESS = list({ eth0: [v4('192.168.0.1')] });

describe('Go TestPrivateIPv4', () => {
  it('returns an error: the lister fails, and its error is the cause', () => {
    let error: unknown;
    try {
      privateIPv4(GO_MOCK_FAILING);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InterfaceListError);
    expect((error as Error).cause).toEqual(new Error('failed to get addresses'));
  });

  it('empty address list: no private ip address', () => {
    expect(() => privateIPv4(GO_MOCK_EMPTY)).toThrow(NoPrivateAddressError);
    expect(() => privateIPv4(GO_MOCK_EMPTY)).toThrow(/no private ip address/);
  });

  it('success: 192.168.0.1', () => {
    expect(privateIPv4(GO_MOCK_SUCCESS)).toBe('192.168.0.1');
  });
});

describe('Go TestLower16BitPrivateIP', () => {
  it('returns an error', () => {
    expect(() => lower16BitPrivateIP(GO_MOCK_FAILING)).toThrow(InterfaceListError);
  });
  it('empty address list', () => {
    expect(() => lower16BitPrivateIP(GO_MOCK_EMPTY)).toThrow(NoPrivateAddressError);
  });
  it('success: 192.168.0.1 -> 1', () => {
    expect(lower16BitPrivateIP(GO_MOCK_SUCCESS)).toBe(1);
  });
});

describe("Go's private ranges", () => {
  it.each([
    ['10.0.0.1', true],
    ['10.255.255.255', true],
    ['172.16.0.1', true],
    ['172.31.255.254', true],
    ['172.15.0.1', false],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['192.169.1.1', false],
    ['169.254.3.4', true],
    ['100.64.0.1', false], // carrier-grade NAT (Calico): not private in Go (issue #17)
    ['192.0.2.10', false], // documentation range, what these test machines carry
    ['8.8.8.8', false],
    ['127.0.0.1', false],
    ['::ffff:10.1.2.3', true], // IPv4-mapped: Go's To4() sees the IPv4 address
    ['fd00::1', false],
    ['not an address', false],
  ])('%s -> %s', (address, expected) => {
    expect(isPrivateIPv4(address)).toBe(expected);
  });

  it('takes the first private address in OS order, skipping loopback, IPv6 and public ones', () => {
    const interfaces = list({
      lo: [v4('127.0.0.1', true), { address: '::1', family: 'IPv6', internal: true }],
      eth0: [v6('2001:db8::5'), v4('203.0.113.9')],
      cali1: [v4('100.64.3.4')],
      eth1: [v4('10.0.3.2')],
      eth2: [v4('192.168.7.7')],
    });
    expect(privateIPv4(interfaces)).toBe('10.0.3.2');
    expect(lower16BitPrivateIP(interfaces)).toBe((3 << 8) | 2);
  });

  it('names the addresses it saw when none is private', () => {
    const interfaces = list({ eth0: [v4('192.0.2.10'), v6('2001:db8::1')] });
    expect(() => privateIPv4(interfaces)).toThrow(/found 192.0.2.10, 2001:db8::1$/);
  });
});

describe('privateIpMachineId (told the bit width, Go issue #82)', () => {
  it('gives the low 16 bits when the field has 16 bits or more', () => {
    const provider = privateIpMachineId({ interfaces: list({ eth0: [v4('10.1.255.254')] }) });
    expect(provider({ bits: 16 })).toBe(65_534);
    expect(provider({ bits: 20 })).toBe(65_534);
  });

  it('gives the ID when it fits a narrower field', () => {
    const provider = privateIpMachineId({ interfaces: list({ eth0: [v4('10.9.0.5')] }) });
    expect(provider({ bits: 8 })).toBe(5);
  });

  it('fails clearly when the address gives an ID the field cannot hold', () => {
    const provider = privateIpMachineId({ interfaces: list({ eth0: [v4('10.0.3.7')] }) });
    expect(() => provider({ bits: 8 })).toThrow(MachineIdDoesNotFitError);
    expect(() => provider({ bits: 8 })).toThrow(
      /10.0.3.7 gives machine ID 775, which needs 10 bits; .* has 8/,
    );
  });

  it("a host without a private address: the hint says what a library caller can do, or the caller's own", () => {
    const interfaces = list({ eth0: [v4('192.0.2.10')] });
    expect(() => privateIpMachineId({ interfaces })({ bits: 16 })).toThrow(
      /found 192\.0\.2\.10; give the machine ID explicitly \(the machineId setting\), or a provider from @ids\/machine-file/,
    );
    expect(() => privateIpMachineId({ interfaces, hint: 'pass --machine-id N' })({ bits: 16 })).toThrow(
      /found 192\.0\.2\.10; pass --machine-id N$/,
    );
    expect(() => privateIpMachineId({ interfaces })({ bits: 16 })).toThrow(NoPrivateAddressError);
  });

  it('reads IPv6 text itself: mapped, compressed, full and zoned forms, and refuses malformed ones', () => {
    expect(isPrivateIPv4('0:0:0:0:0:ffff:c0a8:0101')).toBe(true);
    expect(isPrivateIPv4('::FFFF:172.20.0.1')).toBe(true);
    expect(isPrivateIPv4('::ffff:8.8.8.8')).toBe(false);
    expect(isPrivateIPv4('fe80::1%eth0')).toBe(false);
    expect(isPrivateIPv4('10.0.0.256')).toBe(false);
    expect(isPrivateIPv4('10.0.0')).toBe(false);
    expect(isPrivateIPv4('1::2::3')).toBe(false);
    const interfaces = list({ eth0: [v6('::ffff:127.0.0.1'), v6('fe80::1%eth0'), v4('bogus')] });
    expect(() => privateIPv4(interfaces)).toThrow(/found fe80::1%eth0$/);
  });

  it('rejects an interface source that is not a function', () => {
    expect(() => privateIpMachineId({ interfaces: {} as never })).toThrow(/expected a function/);
  });
});
