import { describe, expect, it } from 'vitest';
import {
  choosePrivateIPv4,
  chooseUniqueLocalIpv6,
  defaultRouteInterfaces,
  isVirtualBridge,
  MachineIdDoesNotFitError,
  NoPrivateAddressError,
  NoUniqueLocalAddressError,
  privateIpMachineId,
  uniqueLocalIpv6MachineId,
} from '../src/index.js';
import { ipv4Routes, ipv6Routes, list, routes, v4, v6 } from './helpers.js';

// A VPS with a public eth0 and Docker: docker0 is 172.17.0.1 on every such host (issue 15).
const VPS_WITH_DOCKER = list({
  lo: [v4('127.0.0.1', true)],
  eth0: [v4('203.0.113.9'), v6('2001:db8::9')],
  docker0: [v4('172.17.0.1')],
  'br-5f2a9c': [v4('172.18.0.1')],
});
// Two NICs, both private; the kernel lists the storage network first.
const TWO_NICS = list({
  lo: [v4('127.0.0.1', true)],
  ens4: [v4('10.20.0.7')],
  ens3: [v4('192.168.5.9')],
  docker0: [v4('172.17.0.1')],
});

describe('the private IPv4 rule with several candidates', () => {
  it('never takes a virtual bridge: a VPS with Docker has no candidate, and the error names what it left out', () => {
    expect(() => choosePrivateIPv4({ interfaces: VPS_WITH_DOCKER })).toThrow(NoPrivateAddressError);
    expect(() => choosePrivateIPv4({ interfaces: VPS_WITH_DOCKER })).toThrow(
      /found 203\.0\.113\.9, 2001:db8::9, 172\.17\.0\.1 \(docker0, a virtual bridge: left out\), 172\.18\.0\.1 \(br-5f2a9c, a virtual bridge: left out\)/,
    );
    expect(() => privateIpMachineId({ interfaces: VPS_WITH_DOCKER })({ bits: 16 })).toThrow(
      NoPrivateAddressError,
    );
  });

  it('takes a bridge only when asked', () => {
    const choice = choosePrivateIPv4({
      interfaces: VPS_WITH_DOCKER,
      includeBridges: true,
      routes: routes({ IPv4: ipv4Routes(['eth0', 0]) }),
    });
    expect(choice).toMatchObject({ interface: 'docker0', address: '172.17.0.1' });
    expect(choice.why).toBe(
      "2 private IPv4 addresses (172.17.0.1 (docker0), 172.18.0.1 (br-5f2a9c)); none is on the default route's interface (the default route is via eth0): the first in OS order, as Go",
    );
  });

  it('one candidate besides bridges: Go behaviour, and the route table is not read', () => {
    const host = list({ eth0: [v4('10.1.2.3')], docker0: [v4('172.17.0.1')] });
    const unread = () => {
      throw new Error('the route table must not be read for one candidate');
    };
    const choice = choosePrivateIPv4({ interfaces: host, routes: unread });
    expect(choice).toMatchObject({
      interface: 'eth0',
      address: '10.1.2.3',
      candidates: [{ interface: 'eth0', address: '10.1.2.3' }],
    });
    expect(choice.bridges).toEqual([{ interface: 'docker0', address: '172.17.0.1' }]);
    expect(choice.why).toBe(
      'the only private IPv4 address; left out 172.17.0.1 (docker0): a virtual bridge has the same address on every host',
    );
    expect(privateIpMachineId({ interfaces: host, routes: unread })({ bits: 16 })).toBe(2 * 256 + 3);
  });

  it('several candidates: the one on the interface carrying the default route wins, whatever the OS order', () => {
    const choice = choosePrivateIPv4({
      interfaces: TWO_NICS,
      routes: routes({ IPv4: ipv4Routes(['ens3', 100]) }),
    });
    expect(choice).toMatchObject({ interface: 'ens3', address: '192.168.5.9' });
    expect(choice.candidates.map((c) => c.interface)).toEqual(['ens4', 'ens3']);
    expect(choice.why).toMatch(
      /^2 private IPv4 addresses \(10\.20\.0\.7 \(ens4\), 192\.168\.5\.9 \(ens3\)\); ens3 carries the default route; left out 172\.17\.0\.1 \(docker0\)/,
    );
    expect(
      privateIpMachineId({ interfaces: TWO_NICS, routes: routes({ IPv4: ipv4Routes(['ens3', 100]) }) })({
        bits: 16,
      }),
    ).toBe(5 * 256 + 9);
  });

  it('two default routes: the lower metric decides', () => {
    const table = ipv4Routes(['ens3', 600], ['ens4', 100]);
    expect(defaultRouteInterfaces(table, 'IPv4')).toEqual(['ens4', 'ens3']);
    expect(choosePrivateIPv4({ interfaces: TWO_NICS, routes: routes({ IPv4: table }) }).interface).toBe(
      'ens4',
    );
  });

  it('no default route among the candidates, or no readable table: the first in OS order, and the trail says which case', () => {
    const none = choosePrivateIPv4({ interfaces: TWO_NICS, routes: routes({ IPv4: ipv4Routes() }) });
    expect(none.interface).toBe('ens4');
    expect(none.why).toMatch(/there is no default route\): the first in OS order, as Go/);
    const unreadable = choosePrivateIPv4({ interfaces: TWO_NICS, routes: routes({}) });
    expect(unreadable.interface).toBe('ens4');
    expect(unreadable.why).toMatch(
      /the route table could not be read \(ENOENT: .*\): the first in OS order, as Go/,
    );
  });

  it('parses the tables as this kernel writes them (copied from /proc/net on this sandbox)', () => {
    // /proc/net/route and /proc/net/ipv6_route: each has one default route, via eth0.
    const tables = {
      IPv4: [
        'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT                                                       ',
        'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0                                                                               ',
        'eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0                                                                               ',
      ].join('\n'),
      IPv6: [
        'fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0',
        '00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0',
        '00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo',
      ].join('\n'),
    };
    for (const family of ['IPv4', 'IPv6'] as const)
      expect(defaultRouteInterfaces(tables[family], family)).toEqual(['eth0']);
    // A route that is down (flags without RTF_UP) is no way out.
    expect(defaultRouteInterfaces(tables.IPv4.replace('\t0003\t', '\t0002\t'), 'IPv4')).toEqual([]);
  });

  it('knows the well-known bridges and nothing else', () => {
    for (const name of ['docker0', 'cni0', 'virbr0', 'virbr1', 'br-0a1b2c', 'podman0', 'podman1'])
      expect(isVirtualBridge(name)).toBe(true);
    for (const name of ['eth0', 'ens3', 'br0', 'bond0', 'wlan0', 'dockerx'])
      expect(isVirtualBridge(name)).toBe(false);
  });

  it('refuses bad options where they are written', () => {
    expect(() => choosePrivateIPv4({ routes: 'table' as never })).toThrow(/routes: expected a function/);
    expect(() => privateIpMachineId({ includeBridges: 'yes' as never })).toThrow(
      /includeBridges: expected a boolean/,
    );
  });
});

describe('uniqueLocalIpv6MachineId (opt-in)', () => {
  const IPV6_ONLY = list({
    lo: [v6('::1', true)],
    eth0: [v6('fd00::2'), v6('fe80::fc:ff:fe00:1'), v6('2001:db8::2')],
  });

  it('this kind of host (fd00::2, no private IPv4) gets machine ID 2', () => {
    expect(uniqueLocalIpv6MachineId({ interfaces: IPV6_ONLY })({ bits: 16 })).toBe(2);
    expect(chooseUniqueLocalIpv6({ interfaces: IPV6_ONLY })).toMatchObject({
      address: 'fd00::2',
      why: 'the only unique-local IPv6 address',
    });
  });

  it('a planned identifier up to the field width is used whole', () => {
    const host = list({ eth0: [v6('fd12:3456:789a:1::1:ffff')] });
    expect(uniqueLocalIpv6MachineId({ interfaces: host })({ bits: 17 })).toBe(0x1ffff);
    expect(() => uniqueLocalIpv6MachineId({ interfaces: host })({ bits: 16 })).toThrow(
      MachineIdDoesNotFitError,
    );
  });

  it('refuses a SLAAC identifier instead of cutting it to its low bits', () => {
    const host = list({ eth0: [v6('fd00::a1b2:c3ff:fed4:e5f6')] });
    expect(() => uniqueLocalIpv6MachineId({ interfaces: host })({ bits: 16 })).toThrow(
      /fd00::a1b2:c3ff:fed4:e5f6 has interface identifier 0xa1b2c3fffed4e5f6, which needs 64 bits; the layout's machine field has 16/,
    );
  });

  it('no unique-local address: a typed error naming what it saw (link-local and global ones are not taken)', () => {
    const host = list({ eth0: [v6('fe80::1'), v6('2001:db8::7'), v4('192.0.2.1')] });
    expect(() => uniqueLocalIpv6MachineId({ interfaces: host })({ bits: 16 })).toThrow(
      NoUniqueLocalAddressError,
    );
    expect(() => chooseUniqueLocalIpv6({ interfaces: host })).toThrow(
      /expected an interface address in fc00::\/7, found fe80::1, 2001:db8::7, 192\.0\.2\.1\./,
    );
  });

  it('the same guards as IPv4: bridges left out, the default route breaks a tie', () => {
    const host = list({ cni0: [v6('fd10::1')], eth1: [v6('fd00::5')], eth0: [v6('fd00:1::9')] });
    const choice = chooseUniqueLocalIpv6({
      interfaces: host,
      routes: routes({ IPv6: ipv6Routes(['eth0', 1024]) }),
    });
    expect(choice).toMatchObject({ interface: 'eth0', address: 'fd00:1::9' });
    expect(choice.why).toBe(
      '2 unique-local IPv6 addresses (fd00::5 (eth1), fd00:1::9 (eth0)); eth0 carries the default route; left out fd10::1 (cni0): a virtual bridge has the same address on every host',
    );
    // lo's unreachable default route is not a way out.
    expect(defaultRouteInterfaces(ipv6Routes(), 'IPv6')).toEqual([]);
  });
});
