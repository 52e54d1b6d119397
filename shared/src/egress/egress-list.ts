import { ipBits, formatIp, looksNumeric, parseIpv4, parseIpv6, type IpNetwork } from './ip-address';

/**
 * One entry of an egress allow or deny list. Grammar (docs/egress.md):
 *   name            example.com             that name only
 *   *.name          *.example.com           any name under it, not example.com itself
 *   name:port       example.com:8443        (and *.name:port)
 *   IPv4            203.0.113.7[:port]
 *   IPv6            2001:db8::7   or  [2001:db8::7]:443 (a port needs the brackets)
 *   CIDR            203.0.113.0/24[:port], 2001:db8::/32, [2001:db8::/32]:443
 * Without a port an allow entry means ports 80 and 443 (what package registries and git hosts
 * use), a deny entry every port. Names are compared in lower case with one trailing dot dropped;
 * internationalised names are written in their xn-- form, which is what clients send.
 */
export type EgressRule =
  | { kind: 'name'; entry: string; name: string; subdomains: boolean; port?: number }
  | { kind: 'address'; entry: string; network: IpNetwork; port?: number };

/** Ports an allow entry without one stands for. */
export const DEFAULT_ALLOW_PORTS: readonly number[] = [80, 443];

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

export function parseEgressList(entries: readonly unknown[]): { rules: EgressRule[] } | { errors: string[] } {
  const rules: EgressRule[] = [];
  const errors: string[] = [];
  entries.forEach((entry, i) => {
    const r = parseEgressEntry(entry);
    if ('error' in r) errors.push(`entry ${i + 1} ${JSON.stringify(entry) ?? String(entry)}: ${r.error}`);
    else rules.push(r.rule);
  });
  return errors.length > 0 ? { errors } : { rules };
}

export function parseEgressEntry(entry: unknown): { rule: EgressRule } | { error: string } {
  if (typeof entry !== 'string') return { error: 'is not a string' };
  if (entry.length === 0) return { error: 'is empty' };
  if (/\s/.test(entry)) return { error: 'contains white space; write one host per entry, no spaces' };
  if (entry.length > 300) return { error: 'is longer than 300 characters' };
  if (entry.includes('://')) {
    return { error: 'gives a scheme; write the host alone (example.com), with :port if not 80 or 443' };
  }
  if (/[@?#]/.test(entry)) return { error: 'gives a user, query or fragment; write the host alone' };
  const { host, port, error } = splitPort(entry);
  if (error) return { error };
  const base = port === undefined ? {} : { port };
  const address = parseAddressOrNetwork(host);
  if (address === 'bad-prefix') return { error: 'has a bad prefix length after "/"' };
  if (address && 'hostBits' in address) {
    return { error: `has bits set below its /${address.prefix} prefix; did you mean ${address.hostBits}?` };
  }
  if (address) return { rule: { kind: 'address', entry, network: address, ...base } };
  if (host.includes('/')) return { error: 'gives a path; write the host alone (paths cannot be allowed apart)' };
  if (host.includes('[') || host.includes(']') || host.includes(':')) return { error: 'is not a valid IP address' };
  return parseName(entry, host, base);
}

function splitPort(entry: string): { host: string; port?: number; error?: string } {
  let host = entry;
  let portText: string | undefined;
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0) return { host, error: 'opens "[" without closing it' };
    host = entry.slice(1, close);
    const rest = entry.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return { host, error: `has "${rest}" after "]"; only :port may follow` };
      portText = rest.slice(1);
    }
    if (!host.includes(':')) return { host, error: 'puts something other than an IPv6 address in brackets' };
  } else if ((entry.match(/:/g) ?? []).length === 1) {
    [host, portText] = entry.split(':') as [string, string];
  }
  if (portText === undefined) return { host };
  if (!/^[1-9][0-9]{0,4}$/.test(portText) || Number(portText) > 65535) {
    return { host, error: `has a bad port "${portText}" (a number from 1 to 65535)` };
  }
  return { host, port: Number(portText) };
}

type ParsedAddress = IpNetwork | { prefix: number; hostBits: string } | 'bad-prefix' | undefined;

function parseAddressOrNetwork(text: string): ParsedAddress {
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const ip = parseIpv4(addrText) ?? parseIpv6(addrText);
  if (!ip) return undefined;
  if (slash < 0) return unmapNetwork({ ...ip, prefix: ipBits(ip.family) });
  const prefixText = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > ipBits(ip.family)) return 'bad-prefix';
  const prefix = Number(prefixText);
  const hostMask = (1n << BigInt(ipBits(ip.family) - prefix)) - 1n;
  if ((ip.value & hostMask) !== 0n) {
    return { prefix, hostBits: `${formatIp({ family: ip.family, value: ip.value & ~hostMask })}/${prefix}` };
  }
  return unmapNetwork({ ...ip, prefix });
}

/** ::ffff:a.b.c.d/n (n >= 96) is written a.b.c.d/(n - 96): the proxy judges mapped addresses as IPv4. */
function unmapNetwork(net: IpNetwork): IpNetwork {
  if (net.family !== 6 || net.prefix < 96 || net.value >> 32n !== 0xffffn) return net;
  return { family: 4, value: net.value & 0xffffffffn, prefix: net.prefix - 96 };
}

function parseName(entry: string, host: string, base: { port?: number }): { rule: EgressRule } | { error: string } {
  if (/[^\x00-\x7f]/.test(host)) {
    return { error: 'is not ASCII; write an internationalised name in its xn-- (punycode) form' };
  }
  let name = host.toLowerCase().replace(/\.$/, '');
  let subdomains = false;
  if (name.startsWith('*.')) {
    subdomains = true;
    name = name.slice(2);
  }
  if (name === '*' || name === '') return { error: 'allows every host; list the hosts instead' };
  if (name.includes('*')) {
    return { error: 'has a wildcard other than a leading "*." (write *.example.com for every name under it)' };
  }
  if (looksNumeric(name)) {
    return { error: 'reads as a number-form IP address; write an address as a.b.c.d or an IPv6 literal' };
  }
  const labels = name.split('.');
  if (name.length > 253 || labels.some((l) => !LABEL.test(l))) {
    return { error: 'is not a valid host name (letters, digits, "-" and "_" in dot-separated labels)' };
  }
  if (subdomains && labels.length < 2) {
    return { error: `covers a whole top-level domain; name the domain (*.example.${name})` };
  }
  return { rule: { kind: 'name', entry, name, subdomains, ...base } };
}
