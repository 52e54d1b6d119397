import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerOptions, parseDockerHost } from '../../src/sandbox/docker-host';
import { hostKeyVerifier, knownHostKeys } from '../../src/sandbox/ssh-known-hosts';

const keyA = randomBytes(51);
const keyB = randomBytes(51);
const b64 = (b: Buffer) => b.toString('base64');

function file(lines: string[]): string {
  const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-known-')), 'known_hosts');
  writeFileSync(f, `${lines.join('\n')}\n`);
  return f;
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${b64(salt)}|${b64(createHmac('sha1', salt).update(name).digest())}`;
}

describe('the SSH host key of a Docker engine (known_hosts)', () => {
  it('accepts the key known_hosts lists for the host, plain or hashed, [host]:port for another port', () => {
    const f = file([
      '# comment',
      `build-2,10.0.0.7 ssh-ed25519 ${b64(keyA)}`,
      `${hashed('[10.213.0.2]:2222')} ssh-ed25519 ${b64(keyB)}`,
    ]);
    expect(hostKeyVerifier(knownHostKeys('10.0.0.7', 22, [f]))(keyA)).toBe(true);
    expect(hostKeyVerifier(knownHostKeys('10.0.0.7', 22, [f]))(keyB)).toBe(false);
    expect(hostKeyVerifier(knownHostKeys('10.213.0.2', 2222, [f]))(keyB)).toBe(true);
    // The same address on port 22 is another entry: not known.
    expect(knownHostKeys('10.213.0.2', 22, [f]).accepted).toEqual([]);
  });

  it('refuses a key that is revoked, and ignores cert-authority lines and wildcard patterns', () => {
    const f = file([
      `build-2 ssh-ed25519 ${b64(keyA)}`,
      `@revoked build-2 ssh-ed25519 ${b64(keyA)}`,
      `@cert-authority build-3 ssh-ed25519 ${b64(keyB)}`,
      `build-* ssh-ed25519 ${b64(keyB)}`,
    ]);
    expect(hostKeyVerifier(knownHostKeys('build-2', 22, [f]))(keyA)).toBe(false);
    expect(knownHostKeys('build-3', 22, [f]).accepted).toEqual([]);
    expect(knownHostKeys('build-4', 22, [f]).accepted).toEqual([]);
  });

  it('an ssh:// engine whose host key is unknown, or with no agent, is refused before any connection', () => {
    const host = parseDockerHost('ssh://ops@10.213.0.2', {});
    const empty = file(['other ssh-ed25519 AAAA']);
    expect(() => dockerOptions(host, { SSH_AUTH_SOCK: '/a', GATEHOUSE_SSH_KNOWN_HOSTS: empty })).toThrow(
      new RegExp(`host key of 10.213.0.2 is not in ${empty}: add it \\(ssh-keyscan -p 22 10.213.0.2`),
    );
    expect(() => dockerOptions(host, { GATEHOUSE_SSH_KNOWN_HOSTS: empty })).toThrow(/SSH_AUTH_SOCK is not set/);
    const known = file([`10.213.0.2 ssh-ed25519 ${b64(keyA)}`]);
    const o = dockerOptions(host, { SSH_AUTH_SOCK: '/a', GATEHOUSE_SSH_KNOWN_HOSTS: known });
    const verify = (o.sshOptions as { hostVerifier: (k: Buffer) => boolean }).hostVerifier;
    expect([verify(keyA), verify(keyB)]).toEqual([true, false]);
    expect(
      dockerOptions(parseDockerHost('ssh://10.213.0.2', {}), { SSH_AUTH_SOCK: '/a', GATEHOUSE_SSH_KNOWN_HOSTS: known }),
    ).toMatchObject({ username: os.userInfo().username });
  });
});
