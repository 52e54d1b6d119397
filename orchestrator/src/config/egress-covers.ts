import { BlockList } from 'node:net';
import { DEFAULT_ALLOW_PORTS } from '@gatehouse/shared/egress';
import type { EgressEntry } from './egress-entry';

/**
 * Whether every connection `inner` allows is also allowed by `outer`: the test a repository's
 * egress entry must pass to be kept (narrowing). `a.example.com` and `*.a.example.com` are within
 * `*.example.com`; `example.com` itself is not (a wildcard stands for subdomains only). Ports are
 * read as the proxy reads them: an allow entry without a port means ports 80 and 443 only
 * (DEFAULT_ALLOW_PORTS), so it covers itself and `:80` or `:443`, never `:22`; a port covers only
 * itself. A name never covers an address: the proxy refuses addresses it was not given literally.
 */
export function egressCovers(outer: EgressEntry, inner: EgressEntry): boolean {
  if (outer.kind === 'name') {
    if (inner.kind !== 'name' || !portWithin(outer.port, inner.port)) return false;
    if (!outer.wildcard) return !inner.wildcard && inner.name === outer.name;
    return inner.name.endsWith(`.${outer.name}`) || (inner.wildcard && inner.name === outer.name);
  }
  if (inner.kind === 'name' || inner.version !== outer.version) return false;
  if (outer.kind === 'ip') {
    if (inner.kind === 'ip') return sameAddress(outer, inner) && portWithin(outer.port, inner.port);
    return outer.port === undefined && inner.prefix === bitsOf(inner.version) && sameAddress(outer, inner);
  }
  const block = new BlockList();
  block.addSubnet(outer.address, outer.prefix, `ipv${outer.version}`);
  if (inner.kind === 'ip')
    return portWithin(undefined, inner.port) && block.check(inner.address, `ipv${inner.version}`);
  // A block is within another if its prefix is no shorter and its first address is inside.
  return inner.prefix >= outer.prefix && block.check(inner.address, `ipv${inner.version}`);
}

/** Whether `entry` is within any of `allowed`. */
export function egressAllowedBy(allowed: readonly EgressEntry[], entry: EgressEntry): boolean {
  return allowed.some((outer) => egressCovers(outer, entry));
}

/** Whether the ports `inner` allows are among those `outer` allows (no port: 80 and 443). */
function portWithin(outer: number | undefined, inner: number | undefined): boolean {
  if (outer === undefined) return inner === undefined || DEFAULT_ALLOW_PORTS.includes(inner);
  return outer === inner;
}

function bitsOf(version: 4 | 6): number {
  return version === 4 ? 32 : 128;
}

function sameAddress(a: { address: string; version: 4 | 6 }, b: { address: string }): boolean {
  const one = new BlockList();
  one.addAddress(a.address, `ipv${a.version}`);
  return one.check(b.address, `ipv${a.version}`);
}
