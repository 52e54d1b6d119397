import { describe, expect, it } from 'vitest';
import { egressCovers } from '../../src/config/egress-covers';
import { egressEntryText, parseEgressEntry, type EgressEntry } from '../../src/config/egress-entry';

function entry(text: string): EgressEntry {
  const r = parseEgressEntry(text);
  if (!r.ok) throw new Error(`${text}: ${r.problem}`);
  return r.entry;
}

describe('egress entry syntax', () => {
  it.each([
    ['registry.npmjs.example.com', 'registry.npmjs.example.com'],
    ['Registry.NPMJS.Example.COM', 'registry.npmjs.example.com'],
    ['*.example.com', '*.example.com'],
    ['*.example.com:8443', '*.example.com:8443'],
    ['pypi.example.net:443', 'pypi.example.net:443'],
    ['localhost', 'localhost'],
    ['10.1.2.3', '10.1.2.3'],
    ['10.1.2.3:4873', '10.1.2.3:4873'],
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['::1', '::1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['[2001:db8::1]:443', '[2001:db8::1]:443'],
    ['[::1]', '::1'],
    ['fd00::/8', 'fd00::/8'],
    ['host:1', 'host:1'],
    ['host:65535', 'host:65535'],
  ])('%s is an entry (%s)', (text, normal) => {
    expect(egressEntryText(entry(text))).toBe(normal);
  });

  it.each([
    ['https://registry.npmjs.example.com', /no scheme.*registry\.npmjs\.example\.com/],
    ['registry.npmjs.example.com/some/path', /no path/],
    ['host:0', /1 to 65535/],
    ['host:65536', /1 to 65535/],
    ['host:http', /port number/],
    ['host:', /port number/],
    ['', /expected a host/],
    [' host', /no spaces/],
    ['a.*.example.com', /wildcard/],
    ['*', /every host/],
    ['*:443', /every host/],
    ['*example.com', /wildcard/],
    ['exa mple.com', /host name/],
    ['-bad.example.com', /host name/],
    ['1.2.3', /not a valid IPv4/],
    ['300.1.1.1', /not a valid IPv4/],
    ['10.0.0.0/33', /0 to 32/],
    ['fd00::/129', /0 to 128/],
    ['[fd00::1]:99999', /1 to 65535/],
    ['[not-v6]:80', /IPv6/],
    ['under_score.example.com', /host name/],
  ])('%j is refused (%s)', (text, problem) => {
    const r = parseEgressEntry(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatch(problem);
  });
});

describe('an entry within another (narrowing)', () => {
  it.each([
    ['*.example.com', 'a.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', '*.a.example.com', true],
    ['*.example.com', '*.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'badexample.com', false],
    ['*.example.com', '*.com', false],
    ['a.example.com', '*.example.com', false],
    ['a.example.com', 'a.example.com', true],
    ['a.example.com', 'A.Example.COM', true],
    ['a.example.com', 'b.example.com', false],
    ['registry.npmjs.example.com', 'registry.npmjs.example.com:443', true],
    ['registry.npmjs.example.com:443', 'registry.npmjs.example.com', false],
    ['registry.npmjs.example.com:443', 'registry.npmjs.example.com:80', false],
    ['*.example.com:443', 'a.example.com:443', true],
    ['*.example.com:443', 'a.example.com', false],
    ['10.0.0.0/8', '10.1.2.3', true],
    ['10.0.0.0/8', '10.1.0.0/16', true],
    ['10.1.0.0/16', '10.0.0.0/8', false],
    ['10.0.0.0/8', '11.0.0.1', false],
    // No port means 80 and 443 to the proxy (shared/src/egress): a repository may not add another port.
    ['10.0.0.1', '10.0.0.1:4873', false],
    ['10.0.0.1', '10.0.0.1:443', true],
    ['registry.npmjs.example.com', 'registry.npmjs.example.com:22', false],
    ['registry.npmjs.example.com', 'registry.npmjs.example.com:80', true],
    ['*.example.com', 'a.example.com:6379', false],
    ['10.0.0.0/8', '10.1.2.3:5432', false],
    ['10.0.0.0/8', '10.1.2.3:443', true],
    ['10.0.0.1:4873', '10.0.0.1', false],
    ['10.0.0.1', '10.0.0.1/32', true],
    ['10.0.0.1', '10.0.0.0/24', false],
    ['fd00::/8', 'fd12::1', true],
    ['fd00::/8', '10.0.0.1', false],
    ['[::1]:80', '::1', false],
    ['::1', '[::1]:80', true],
    ['localhost', '127.0.0.1', false],
    ['*.example.com', '10.0.0.1', false],
    ['10.0.0.0/8', 'ten.example.com', false],
  ])('%s covers %s: %s', (outer, inner, expected) => {
    expect(egressCovers(entry(outer), entry(inner))).toBe(expected);
  });
});
