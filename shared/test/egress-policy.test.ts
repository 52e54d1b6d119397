import { describe, expect, it } from 'vitest';
import {
  decideAddresses,
  decideTarget,
  formatIp,
  parseEgressPolicy,
  parseIp,
  specialAddressKind,
  type EgressPolicy,
} from '@gatehouse/shared/egress';

const policy = (allow: string[], deny: string[] = []): EgressPolicy => {
  const r = parseEgressPolicy(allow, deny);
  if ('errors' in r) throw new Error(r.errors.join('; '));
  return r.policy;
};

describe('specialAddressKind', () => {
  it.each([
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    // IPv6 forms carrying a special IPv4 address
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b:1::c0a8:101', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
  ])('%s is %s', (text, kind) => {
    expect(specialAddressKind(parseIp(text)!)).toBe(kind);
  });

  // Documentation addresses and the first addresses past the special ranges' edges; nothing is contacted.
  it.each([
    '203.0.113.50',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '2001:db8::1',
    '::ffff:203.0.113.50',
  ])('%s is an ordinary address', (text) => {
    expect(specialAddressKind(parseIp(text)!)).toBeUndefined();
  });

  it('formats addresses canonically', () => {
    expect(formatIp(parseIp('2001:0db8:0:0:0:0:0:0001')!)).toBe('2001:db8::1');
    expect(formatIp(parseIp('[::1]')!)).toBe('::1');
    expect(formatIp(parseIp('1:0:0:2:0:0:0:3')!)).toBe('1:0:0:2::3');
    expect(formatIp(parseIp('10.0.0.1')!)).toBe('10.0.0.1');
  });
});

describe('decideTarget', () => {
  const p = policy([
    'registry.npmjs.example.com',
    '*.example.org',
    'api.example.com:8443',
    '203.0.113.7',
    '[2001:db8::5]:443',
  ]);

  it.each([
    ['registry.npmjs.example.com', 443],
    ['registry.npmjs.example.com', 80],
    ['REGISTRY.npmjs.EXAMPLE.com', 443],
    ['registry.npmjs.example.com.', 443],
    ['a.example.org', 443],
    ['a.b.example.org', 80],
    ['api.example.com', 8443],
  ])('allows %s:%i by name', (host, port) => {
    expect(decideTarget(p, host, port)).toMatchObject({ ok: true, kind: 'name' });
  });

  it.each([
    ['registry.npmjs.example.com', 8080, /not on the allowlist/],
    ['evil-registry.npmjs.example.com', 443, /not on the allowlist/],
    ['registry.npmjs.example.com.evil.com', 443, /not on the allowlist/],
    ['example.org', 443, /not on the allowlist/], // *.name is subdomains only
    ['aexample.org', 443, /not on the allowlist/],
    ['api.example.com', 443, /not on the allowlist/],
    ['127.1', 443, /number-form/],
    ['0x7f.1', 443, /number-form/],
    ['2130706433', 80, /number-form/],
    ['0177.0.0.1', 80, /number-form/],
    ['registry.npmjs.example.com..', 443, /not a valid host name/],
    ['registry npmjs.example.com', 443, /not a valid host name/],
    ['', 443, /not a valid host name/],
    ['registry.npmjs.example.com', 0, /bad port/],
    ['203.0.113.8', 443, /address not on the allowlist/],
    ['203.0.113.7', 8080, /address not on the allowlist/],
    ['2001:db8::5', 80, /address not on the allowlist/],
  ])('refuses %j:%i', (host, port, why) => {
    const d = decideTarget(p, host, port);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.reason).toMatch(why);
  });

  it('decides an IP literal completely, in canonical form', () => {
    expect(decideTarget(p, '203.0.113.7', 443)).toEqual({ ok: true, kind: 'address', address: '203.0.113.7' });
    expect(decideTarget(p, '[2001:0db8::0005]', 443)).toEqual({ ok: true, kind: 'address', address: '2001:db8::5' });
    expect(decideTarget(p, '::ffff:203.0.113.7', 443)).toEqual({ ok: true, kind: 'address', address: '203.0.113.7' });
  });

  it('lets deny win over allow, for names and addresses', () => {
    const q = policy(['*.example.org', '10.0.0.0/8'], ['bad.example.org', '10.9.0.0/16']);
    expect(decideTarget(q, 'good.example.org', 443).ok).toBe(true);
    expect(decideTarget(q, 'bad.example.org', 443)).toEqual({
      ok: false,
      reason: 'on the deny list (bad.example.org)',
    });
    // A deny entry without a port covers every port.
    expect(decideTarget(q, 'bad.example.org', 8080).ok).toBe(false);
    expect(decideTarget(q, '10.1.0.1', 443).ok).toBe(true);
    expect(decideTarget(q, '10.9.0.1', 443)).toEqual({ ok: false, reason: 'on the deny list (10.9.0.0/16)' });
    // An IPv6 form of a denied IPv4 address is denied too.
    expect(decideTarget(q, '::ffff:10.9.0.1', 443).ok).toBe(false);
  });
});

describe('decideAddresses (after the proxy resolved an allowed name)', () => {
  it.each([
    ['127.0.0.1'],
    ['::1'],
    ['10.0.0.5'],
    ['169.254.169.254'],
    ['fd00:ec2::254'],
    ['100.100.100.200'],
    ['::ffff:127.0.0.1'],
    ['::ffff:169.254.169.254'],
    ['0.0.0.0'],
  ])('refuses a name resolving to %s unless listed literally', (address) => {
    const byName = decideAddresses(policy(['pkg.example']), [address], 443);
    expect(byName).toMatchObject({ ok: false, reason: expect.stringMatching(/not listed literally/) as unknown });
    const listed = decideAddresses(
      policy(['pkg.example', address.includes(':') ? `[${address}]` : address]),
      [address],
      443,
    );
    expect(listed.ok).toBe(true);
  });

  it('a CIDR entry covering the address counts as listing it; a port must match', () => {
    expect(decideAddresses(policy(['pkg.example', '10.0.0.0/8']), ['10.3.4.5'], 443).ok).toBe(true);
    expect(decideAddresses(policy(['pkg.example', '10.0.0.0/8:8080']), ['10.3.4.5'], 443).ok).toBe(false);
  });

  it('refuses the whole answer if any address is refused (no picking the public one)', () => {
    const d = decideAddresses(policy(['pkg.example']), ['203.0.113.9', '127.0.0.1'], 443);
    expect(d).toMatchObject({ ok: false, address: '127.0.0.1' });
  });

  it('connects to a checked address, the first IPv4 one if any, in canonical form', () => {
    expect(decideAddresses(policy(['pkg.example']), ['2001:db8::9', '203.0.113.9'], 443)).toEqual({
      ok: true,
      address: '203.0.113.9',
    });
    expect(decideAddresses(policy(['pkg.example']), ['2001:0db8::0009', '2001:db8::10'], 443)).toEqual({
      ok: true,
      address: '2001:db8::9',
    });
  });

  it('applies the deny list to resolved addresses', () => {
    const d = decideAddresses(policy(['pkg.example'], ['203.0.113.0/24']), ['203.0.113.9'], 443);
    expect(d).toMatchObject({ ok: false, reason: expect.stringMatching(/deny list \(203.0.113.0\/24\)/) as unknown });
  });

  it('refuses an empty or malformed answer', () => {
    expect(decideAddresses(policy(['pkg.example']), [], 443).ok).toBe(false);
    expect(decideAddresses(policy(['pkg.example']), ['not-an-ip'], 443).ok).toBe(false);
  });
});

describe('parseEgressPolicy', () => {
  it('names the list of each bad entry', () => {
    expect(parseEgressPolicy(['ok.example', 'x y'], ['https://z'])).toEqual({
      errors: [expect.stringMatching(/^allow entry 2/), expect.stringMatching(/^deny entry 1/)],
    });
  });
});
