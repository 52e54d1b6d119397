import { isIPv4, isIPv6 } from 'node:net';

/**
 * One entry of an egress allowlist or deny list, as a config writes it: `name`, `*.name`, either
 * with `:port`; an IPv4 or IPv6 literal (`[v6]:port` with a port); or a CIDR block. No scheme and
 * no path: the proxy decides on host and port alone, so anything else would look like a rule it
 * cannot keep. This file is the config's own reading of the syntax, kept apart so the proxy's
 * parser (shared/src/egress/) can replace it.
 */
export type EgressEntry =
  | { kind: 'name'; name: string; wildcard: boolean; port?: number }
  | { kind: 'ip'; address: string; version: 4 | 6; port?: number }
  | { kind: 'cidr'; address: string; version: 4 | 6; prefix: number };

export type EgressEntryResult = { ok: true; entry: EgressEntry } | { ok: false; problem: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function parseEgressEntry(text: string): EgressEntryResult {
  const fail = (problem: string): EgressEntryResult => ({ ok: false, problem });
  if (text.trim() !== text || text === '') return fail('expected a host (no spaces), e.g. registry.npmjs.org');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (scheme) return fail(`no scheme: write the host alone (${text.slice(scheme[0].length).split('/')[0]})`);
  if (text === '*' || text.startsWith('*:'))
    return fail('a lone * would allow every host: list the hosts, or *.domain for its subdomains');
  if (text.startsWith('[')) return bracketed(text);
  if (text.includes('/')) return cidrOrPath(text);
  if (isIPv6(text)) return { ok: true, entry: { kind: 'ip', address: text.toLowerCase(), version: 6 } };
  const colon = text.lastIndexOf(':');
  const host = colon < 0 ? text : text.slice(0, colon);
  let port: number | undefined;
  if (colon >= 0) {
    const p = parsePort(text.slice(colon + 1));
    if (typeof p === 'string') return fail(p);
    port = p;
  }
  const withPort = port === undefined ? {} : { port };
  if (isIPv4(host)) return { ok: true, entry: { kind: 'ip', address: host, version: 4, ...withPort } };
  const name = host.toLowerCase();
  const wildcard = name.startsWith('*.');
  const bare = wildcard ? name.slice(2) : name;
  const problem = hostNameProblem(bare);
  if (problem) return fail(problem);
  return { ok: true, entry: { kind: 'name', name: bare, wildcard, ...withPort } };
}

/** Normalised text of an entry (lower case, canonical), for messages and comparison. */
export function egressEntryText(e: EgressEntry): string {
  if (e.kind === 'cidr') return `${e.address}/${e.prefix}`;
  const host = e.kind === 'name' ? `${e.wildcard ? '*.' : ''}${e.name}` : e.address;
  if (e.port === undefined) return host;
  return e.kind === 'ip' && e.version === 6 ? `[${host}]:${e.port}` : `${host}:${e.port}`;
}

function bracketed(text: string): EgressEntryResult {
  const m = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
  if (!m || !isIPv6(m[1]!)) return { ok: false, problem: 'expected [IPv6]:port, e.g. [2001:db8::1]:443' };
  if (m[2] === undefined) return { ok: true, entry: { kind: 'ip', address: m[1]!.toLowerCase(), version: 6 } };
  const port = parsePort(m[2]);
  if (typeof port === 'string') return { ok: false, problem: port };
  return { ok: true, entry: { kind: 'ip', address: m[1]!.toLowerCase(), version: 6, port } };
}

function cidrOrPath(text: string): EgressEntryResult {
  const slash = text.indexOf('/');
  const address = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  const version = isIPv4(address) ? 4 : isIPv6(address) ? 6 : undefined;
  if (version === undefined || !/^\d{1,3}$/.test(bits))
    return { ok: false, problem: `no path: write the host alone (${address.split(':')[0] || text})` };
  const prefix = Number(bits);
  const max = version === 4 ? 32 : 128;
  if (prefix > max) return { ok: false, problem: `a CIDR prefix of an IPv${version} address is 0 to ${max}` };
  return { ok: true, entry: { kind: 'cidr', address: address.toLowerCase(), version, prefix } };
}

function parsePort(text: string): number | string {
  if (!/^\d{1,5}$/.test(text)) return 'expected a port number after ":"';
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : 'a port is 1 to 65535';
}

function hostNameProblem(name: string): string | undefined {
  if (name.includes('*')) return 'a wildcard is only "*." at the start, e.g. *.example.com';
  if (name.length > 253) return 'a host name is at most 253 characters';
  const labels = name.split('.');
  if (labels.some((l) => !LABEL.test(l)))
    return 'expected a host name (letters, digits, hyphens and dots), an IP address or a CIDR block';
  if (/^\d+$/.test(labels.at(-1)!)) return 'not a valid IPv4 address or host name';
  return undefined;
}
