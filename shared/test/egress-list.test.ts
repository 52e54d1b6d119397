import { describe, expect, it } from 'vitest';
import { parseEgressList, type EgressRule } from '@gatehouse/shared/egress';

const one = (entry: string): EgressRule => {
  const r = parseEgressList([entry]);
  if ('errors' in r) throw new Error(r.errors.join('; '));
  return r.rules[0]!;
};
const errorOf = (entry: unknown): string => {
  const r = parseEgressList([entry]);
  if (!('errors' in r)) throw new Error(`${JSON.stringify(entry)} parsed`);
  return r.errors[0]!;
};

describe('parseEgressList: valid entries', () => {
  it.each([
    ['registry.npmjs.example.com', { kind: 'name', name: 'registry.npmjs.example.com', subdomains: false }],
    ['Registry.NPMJS.Example.COM.', { kind: 'name', name: 'registry.npmjs.example.com', subdomains: false }],
    ['*.pythonhosted.example.net', { kind: 'name', name: 'pythonhosted.example.net', subdomains: true }],
    ['example.com:8443', { kind: 'name', name: 'example.com', subdomains: false, port: 8443 }],
    ['*.example.com:8443', { kind: 'name', name: 'example.com', subdomains: true, port: 8443 }],
    ['localhost', { kind: 'name', name: 'localhost', subdomains: false }],
    ['xn--bcher-kva.example', { kind: 'name', name: 'xn--bcher-kva.example', subdomains: false }],
  ])('%s', (entry, expected) => {
    expect(one(entry)).toEqual({ entry, ...expected });
  });

  it.each([
    ['203.0.113.7', 4, 32, undefined],
    ['203.0.113.7:8080', 4, 32, 8080],
    ['10.0.0.0/8', 4, 8, undefined],
    ['10.0.0.0/8:443', 4, 8, 443],
    ['::1', 6, 128, undefined],
    ['[::1]', 6, 128, undefined],
    ['[::1]:443', 6, 128, 443],
    ['2001:db8::/32', 6, 32, undefined],
    ['[2001:db8::/32]:443', 6, 32, 443],
    ['::ffff:127.0.0.1', 4, 32, undefined], // judged as the IPv4 address it is
    ['[::ffff:10.0.0.0/104]:443', 4, 8, 443],
  ])('%s is an address entry', (entry, family, prefix, port) => {
    const rule = one(entry);
    expect(rule.kind).toBe('address');
    if (rule.kind !== 'address') return;
    expect([rule.network.family, rule.network.prefix, rule.port]).toEqual([family, prefix, port]);
  });

  it('lists every bad entry at once, each with its reason', () => {
    const r = parseEgressList(['ok.example', '', 'https://x.example', 'a.*.example', 'x.example:0']);
    expect('errors' in r && r.errors).toEqual([
      expect.stringMatching(/^entry 2 "": is empty/),
      expect.stringMatching(/^entry 3 "https:\/\/x.example": gives a scheme/),
      expect.stringMatching(/^entry 4 "a\.\*\.example": has a wildcard other than a leading/),
      expect.stringMatching(/^entry 5 "x.example:0": has a bad port "0"/),
    ]);
  });
});

describe('parseEgressList: refused entries', () => {
  it.each([
    ['', /is empty/],
    [' example.com', /white space/],
    ['a.example b.example', /white space/],
    ['https://example.com', /gives a scheme/],
    ['git+ssh://example.com', /gives a scheme/],
    ['example.com/simple', /gives a path/],
    ['user@example.com', /user, query or fragment/],
    ['example.com?x', /user, query or fragment/],
    ['example.com:', /bad port ""/],
    ['example.com:http', /bad port "http"/],
    ['example.com:65536', /bad port "65536"/],
    ['example.com:080', /bad port "080"/],
    ['example.com:1:2', /not a valid IP address/],
    ['*', /allows every host/],
    ['*.', /allows every host/],
    ['a.*.example.com', /wildcard other than a leading/],
    ['*example.com', /wildcard other than a leading/],
    ['**.example.com', /wildcard other than a leading/],
    ['*.com', /covers a whole top-level domain/],
    ['127.1', /number-form IP address/],
    ['0x7f.1', /number-form IP address/],
    ['0x7f000001', /number-form IP address/],
    ['2130706433', /number-form IP address/],
    ['0177.0.0.1', /number-form IP address/],
    ['010.0.0.1', /number-form IP address/],
    ['1.2.3.256', /number-form IP address/],
    ['bücher.example', /xn-- \(punycode\)/],
    ['-bad.example', /not a valid host name/],
    ['a..example', /not a valid host name/],
    ['exa$mple.com', /not a valid host name/],
    ['10.0.0.1/8', /did you mean 10.0.0.0\/8/],
    ['10.0.0.0/33', /bad prefix length/],
    ['[::1', /opens "\["/],
    ['[::1]x', /only :port may follow/],
    ['[example.com]:443', /other than an IPv6 address/],
    ['fe80::1%eth0', /not a valid IP address/],
    [':::1', /not a valid IP address/],
  ])('%j', (entry, why) => {
    expect(errorOf(entry)).toMatch(why);
  });

  it('a non-string entry', () => {
    expect(errorOf(443)).toMatch(/is not a string/);
  });
});
