import { DEFAULT_ALLOW_PORTS } from '@gatehouse/shared';
import { BlockList } from 'node:net';
import type { EgressEntry } from './egress-entry';

/**
 * Whether every connection `inner` allows is also allowed by `outer`: the test a repository's
 * egress entry must pass to be kept (narrowing). `a.example.com` and `*.a.example.com` are within
 * `*.example.com`; `example.com` itself is not (a wildcard stands for subdomains only). An entry
 * without a port allows every port, so it covers entries with one; a port covers only itself. A
 * name never covers an address: the proxy refuses addresses it was not given literally.
 */
export function egressCovers(outer: EgressEntry, inner: EgressEntry): boolean {
  if (outer.kind === 'name') {
    if (inner.kind !== 'name' || !portsWithin(outer, inner)) return false;
    if (!outer.wildcard) return !inner.wildcard && inner.name === outer.name;
    return inner.name.endsWith(`.${outer.name}`) || (inner.wildcard && inner.name === outer.name);
  }
  if (inner.kind === 'name' || inner.version !== outer.version || !portsWithin(outer, inner)) return false;
  if (outer.kind === 'ip') {
    if (inner.kind === 'ip') return sameAddress(outer, inner);
    return inner.prefix === bitsOf(inner.version) && sameAddress(outer, inner);
  }
  const block = new BlockList();
  block.addSubnet(outer.address, outer.prefix, `ipv${outer.version}`);
  if (inner.kind === 'ip') return block.check(inner.address, `ipv${inner.version}`);
  // A block is within another if its prefix is no shorter and its first address is inside.
  return inner.prefix >= outer.prefix && block.check(inner.address, `ipv${inner.version}`);
}

/** Whether `entry` is within any of `allowed`. */
export function egressAllowedBy(allowed: readonly EgressEntry[], entry: EgressEntry): boolean {
  return allowed.some((outer) => egressCovers(outer, entry));
}

/**
 * The ports an allow entry opens, as the egress proxy reads it (shared/src/egress): its own, else
 * 80 and 443. So `host` does not cover `host:22`: the repository could otherwise open a port the
 * trusted list never allowed.
 */
function portsOf(e: EgressEntry): readonly number[] {
  return e.kind !== 'cidr' && e.port !== undefined ? [e.port] : DEFAULT_ALLOW_PORTS;
}

function portsWithin(outer: EgressEntry, inner: EgressEntry): boolean {
  const open = portsOf(outer);
  return portsOf(inner).every((p) => open.includes(p));
}

function bitsOf(version: 4 | 6): number {
  return version === 4 ? 32 : 128;
}

function sameAddress(a: { address: string; version: 4 | 6 }, b: { address: string }): boolean {
  const one = new BlockList();
  one.addAddress(a.address, `ipv${a.version}`);
  return one.check(b.address, `ipv${a.version}`);
}
