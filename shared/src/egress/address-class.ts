import { networkContains, parseIp, type IpAddress, type IpNetwork } from './ip-address';

/**
 * The kinds of address a proxy must not reach on a name's say-so: a DNS answer is the name owner's
 * claim, and pointing a public name at 127.0.0.1 or the cloud metadata service is the classic way
 * through an allowlist. Such an address is refused unless the allowlist lists it literally.
 */
export type SpecialAddressKind =
  'metadata' | 'unspecified' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'reserved';

const net = (cidr: string): IpNetwork => {
  const [addr, prefix] = cidr.split('/');
  const ip = parseIp(addr!);
  if (!ip) throw new Error(`bad built-in network ${cidr}`);
  return { ...ip, prefix: Number(prefix ?? (ip.family === 4 ? 32 : 128)) };
};

/** Checked in order: the first match names the kind (metadata before the range it sits in). */
const SPECIAL: Array<[IpNetwork, SpecialAddressKind]> = [
  [net('169.254.169.254/32'), 'metadata'], // AWS, GCP, Azure, OpenStack...
  [net('169.254.170.2/32'), 'metadata'], // AWS ECS task metadata
  [net('100.100.100.200/32'), 'metadata'], // Alibaba Cloud
  [net('168.63.129.16/32'), 'metadata'], // Azure wire server: a public address, but the platform's
  [net('192.0.0.192/32'), 'metadata'], // Oracle Cloud
  [net('fd00:ec2::254/128'), 'metadata'], // AWS over IPv6
  [net('0.0.0.0/8'), 'unspecified'], // "this network"; 0.0.0.0 reaches the local host on Linux
  [net('127.0.0.0/8'), 'loopback'],
  [net('10.0.0.0/8'), 'private'],
  [net('172.16.0.0/12'), 'private'],
  [net('192.168.0.0/16'), 'private'],
  [net('100.64.0.0/10'), 'cgnat'],
  [net('169.254.0.0/16'), 'link-local'],
  [net('192.0.0.0/24'), 'reserved'], // IETF protocol assignments
  [net('198.18.0.0/15'), 'reserved'], // benchmarking, used inside some data centres
  [net('224.0.0.0/4'), 'multicast'],
  [net('240.0.0.0/4'), 'reserved'], // includes the broadcast 255.255.255.255
  [net('::/128'), 'unspecified'],
  [net('::1/128'), 'loopback'],
  [net('fc00::/7'), 'private'], // unique local
  [net('fe80::/10'), 'link-local'],
  [net('fec0::/10'), 'private'], // the old site-local
  [net('ff00::/8'), 'multicast'],
  [net('100::/64'), 'reserved'], // discard-only
];

/**
 * IPv6 forms that carry an IPv4 address a host or gateway may turn back into IPv4: mapped
 * (::ffff:a.b.c.d), the old compatible form (::a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and
 * 6to4 (2002:AABB:CCDD::/16). Each is judged by the IPv4 address inside.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  const v = ip.value;
  const low32 = v & 0xffffffffn;
  if (v >> 32n === 0xffffn) return { family: 4, value: low32 }; // ::ffff:0:0/96
  if (v >> 32n === 0n && low32 > 1n) return { family: 4, value: low32 }; // ::/96 except :: and ::1
  if (v >> 32n === 0x64ff9b0000000000000000n) return { family: 4, value: low32 }; // 64:ff9b::/96
  if (v >> 80n === 0x64ff9b0001n) return { family: 4, value: low32 }; // 64:ff9b:1::/48
  if (v >> 112n === 0x2002n) return { family: 4, value: (v >> 80n) & 0xffffffffn }; // 2002::/16
  return undefined;
}

/** The special kind of an address, or undefined for an ordinary public one. */
export function specialAddressKind(ip: IpAddress): SpecialAddressKind | undefined {
  const inner = embeddedIpv4(ip);
  if (inner) return specialAddressKind(inner);
  return SPECIAL.find(([n]) => networkContains(n, ip))?.[1];
}

/** ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket; everything else is returned as it is. */
export function unmapIpv4(ip: IpAddress): IpAddress {
  return ip.family === 6 && ip.value >> 32n === 0xffffn ? { family: 4, value: ip.value & 0xffffffffn } : ip;
}
