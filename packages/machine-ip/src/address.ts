// Just enough address parsing for Go's private-IPv4 rule, written here so that importing this
// package (which every Sonyflake does) loads no parsing library: the rule reads only addresses
// that os.networkInterfaces() reports, dotted IPv4 and IPv6 text.

/** The four octets of an IPv4 address, or of the IPv4 address an IPv4-mapped IPv6 one carries; else undefined. */
export function ipv4Octets(address: string): number[] | undefined {
  return address.includes(':') ? mappedIPv4(address) : dotted(address);
}

/** Whether the text is an address at all (IPv4 or IPv6); invalid text is skipped by the rule. */
export function isAddress(address: string): boolean {
  return address.includes(':') ? ipv6Groups(address) !== undefined : dotted(address) !== undefined;
}

/** 127.0.0.0/8 and ::1 (and the IPv4-mapped form of 127/8). */
export function isLoopback(address: string): boolean {
  const octets = ipv4Octets(address);
  if (octets) return octets[0] === 127;
  const groups = ipv6Groups(address);
  return groups !== undefined && groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1;
}

/**
 * Go's isPrivateIPv4: RFC 1918 (10/8, 172.16/12, 192.168/16) and, since v1.2.1, link-local
 * 169.254/16 (RFC 3927); 100.64/10 (carrier-grade NAT) stays excluded, as in Go (issue #17).
 */
export function isPrivateOctets([a, b]: readonly number[]): boolean {
  return (
    a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254)
  );
}

function dotted(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    octets.push(Number(part));
  }
  return octets;
}

function mappedIPv4(address: string): number[] | undefined {
  const groups = ipv6Groups(address);
  if (!groups || !groups.slice(0, 5).every((g) => g === 0) || groups[5] !== 0xffff) return undefined;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff];
}

/** The eight 16-bit groups of an IPv6 address (a zone such as %eth0 ignored), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  const text = address.split('%')[0]!.toLowerCase();
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (half: string): number[] | undefined => {
    if (half === '') return [];
    const groups: number[] = [];
    const parts = half.split(':');
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1 && part.includes('.')) {
        const octets = dotted(part);
        if (!octets) return undefined;
        groups.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!);
      } else if (/^[0-9a-f]{1,4}$/.test(part)) groups.push(Number.parseInt(part, 16));
      else return undefined;
    }
    return groups;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}
