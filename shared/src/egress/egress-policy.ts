import { embeddedIpv4, specialAddressKind, unmapIpv4 } from './address-class';
import { DEFAULT_ALLOW_PORTS, parseEgressList, type EgressRule } from './egress-list';
import { formatIp, looksNumeric, networkContains, parseIp, type IpAddress } from './ip-address';

/** One phase's lists: deny always wins over allow. */
export interface EgressPolicy {
  allow: EgressRule[];
  deny: EgressRule[];
}

export function parseEgressPolicy(
  allow: readonly unknown[],
  deny: readonly unknown[] = [],
): { policy: EgressPolicy } | { errors: string[] } {
  const a = parseEgressList(allow);
  const d = parseEgressList(deny);
  const errors = [
    ...('errors' in a ? a.errors.map((e) => `allow ${e}`) : []),
    ...('errors' in d ? d.errors.map((e) => `deny ${e}`) : []),
  ];
  if (errors.length > 0 || 'errors' in a || 'errors' in d) return { errors };
  return { policy: { allow: a.rules, deny: d.rules } };
}

/** What the proxy does with a request's host, before any lookup. */
export type TargetDecision =
  | { ok: true; kind: 'name'; name: string }
  | { ok: true; kind: 'address'; address: string }
  | { ok: false; reason: string };

const HOST_CHARS = /^[a-z0-9_.-]+$/;

/**
 * Judges the host and port a client asked for. An IP literal is decided here, completely (it is
 * allowed only by an address entry covering it); a name is decided here and then again, address by
 * address, once the proxy has resolved it (`decideAddresses`).
 */
export function decideTarget(policy: EgressPolicy, rawHost: string, port: number): TargetDecision {
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, reason: 'bad port' };
  const parsed = parseIp(rawHost);
  if (parsed) {
    const ip = unmapIpv4(parsed);
    const address = formatIp(ip);
    const denied = policy.deny.find((r) => addressRuleCovers(r, ip, port, 'deny'));
    if (denied) return { ok: false, reason: `on the deny list (${denied.entry})` };
    if (policy.allow.some((r) => addressRuleCovers(r, ip, port, 'allow')))
      return { ok: true, kind: 'address', address };
    return { ok: false, reason: 'address not on the allowlist' };
  }
  const name = rawHost.toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > 253 || !HOST_CHARS.test(name) || name.split('.').some((l) => l === '')) {
    return { ok: false, reason: 'not a valid host name' };
  }
  // 0x7f.1, 127.1, 2130706433: a resolver would read these as 127.0.0.1; they are no names.
  if (looksNumeric(name)) return { ok: false, reason: 'a number-form address that is not in canonical form' };
  const denied = policy.deny.find((r) => nameRuleMatches(r, name, port, 'deny'));
  if (denied) return { ok: false, reason: `on the deny list (${denied.entry})` };
  if (!policy.allow.some((r) => nameRuleMatches(r, name, port, 'allow'))) {
    return { ok: false, reason: 'not on the allowlist' };
  }
  return { ok: true, kind: 'name', name };
}

/**
 * Judges every address an allowed name resolved to. All must pass: an answer that mixes a public
 * address with 127.0.0.1 is refused whole, and the proxy connects to the returned address, one of
 * those checked, never looking the name up again.
 */
export function decideAddresses(
  policy: EgressPolicy,
  addresses: readonly string[],
  port: number,
): { ok: true; address: string } | { ok: false; reason: string; address?: string } {
  if (addresses.length === 0) return { ok: false, reason: 'the name resolved to no address' };
  for (const text of addresses) {
    const parsed = parseIp(text);
    if (!parsed) return { ok: false, reason: `the resolver returned "${text}", not an address` };
    const ip = unmapIpv4(parsed);
    const address = formatIp(ip);
    const denied = policy.deny.find((r) => addressRuleCovers(r, ip, port, 'deny'));
    if (denied) return { ok: false, reason: `resolves to ${address}, on the deny list (${denied.entry})`, address };
    const kind = specialAddressKind(ip);
    if (kind && !policy.allow.some((r) => addressRuleCovers(r, ip, port, 'allow'))) {
      return { ok: false, reason: `resolves to a ${kind} address (${address}) that is not listed literally`, address };
    }
  }
  // Every address passed; connect to the first IPv4 one if any (Docker networks are IPv4 unless
  // configured otherwise), else the first.
  const checked = addresses.map((a) => unmapIpv4(parseIp(a)!));
  return { ok: true, address: formatIp(checked.find((ip) => ip.family === 4) ?? checked[0]!) };
}

function portMatches(rule: EgressRule, port: number, list: 'allow' | 'deny'): boolean {
  if (rule.port !== undefined) return rule.port === port;
  return list === 'deny' || DEFAULT_ALLOW_PORTS.includes(port);
}

function nameRuleMatches(rule: EgressRule, name: string, port: number, list: 'allow' | 'deny'): boolean {
  if (rule.kind !== 'name' || !portMatches(rule, port, list)) return false;
  return rule.subdomains ? name.endsWith(`.${rule.name}`) : name === rule.name;
}

/** A deny entry also covers the IPv4 address inside an IPv6 form (NAT64, 6to4...) of an address it names. */
function addressRuleCovers(rule: EgressRule, ip: IpAddress, port: number, list: 'allow' | 'deny'): boolean {
  if (rule.kind !== 'address' || !portMatches(rule, port, list)) return false;
  if (networkContains(rule.network, ip)) return true;
  const inner = list === 'deny' ? embeddedIpv4(ip) : undefined;
  return inner !== undefined && networkContains(rule.network, inner);
}
