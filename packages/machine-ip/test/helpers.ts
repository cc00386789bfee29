import type { InterfaceList, RouteSource } from '../src/index.js';

export const v4 = (address: string, internal = false) => ({ address, family: 'IPv4', internal });
export const v6 = (address: string, internal = false) => ({ address, family: 'IPv6', internal });
export const list = (interfaces: InterfaceList) => () => interfaces;

/** /proc/net/route as the kernel writes it, with one line per [iface, metric] default route and a subnet route. */
export function ipv4Routes(...defaults: [iface: string, metric: number][]): string {
  const header = 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT';
  const lines = defaults.map(
    ([iface, metric]) => `${iface}\t00000000\t010200C0\t0003\t0\t0\t${metric}\t00000000\t0\t0\t0`,
  );
  return [header, ...lines, 'eth9\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0', ''].join('\n');
}

/** /proc/net/ipv6_route with a default route per [iface, metric], plus lo's unreachable default and a subnet route. */
export function ipv6Routes(...defaults: [iface: string, metric: number][]): string {
  const zero = '0'.repeat(32);
  const lines = defaults.map(
    ([iface, metric]) =>
      `${zero} 00 ${zero} 00 fd000000000000000000000000000001 ${metric.toString(16).padStart(8, '0')} 00000002 00000000 00000003     ${iface}`,
  );
  lines.push(`${zero} 00 ${zero} 00 ${zero} ffffffff 00000001 00000000 00200200       lo`);
  lines.push(
    `fd000000000000000000000000000000 40 ${zero} 00 ${zero} 00000100 00000001 00000000 00000001     eth9`,
  );
  return `${lines.join('\n')}\n`;
}

/** A route source answering per family; a family left out throws, as /proc does off Linux. */
export function routes(tables: { IPv4?: string; IPv6?: string }): RouteSource {
  return (family) => {
    const table = tables[family];
    if (table === undefined) throw new Error(`ENOENT: no such file or directory, open '/proc/net/${family}'`);
    return table;
  };
}
