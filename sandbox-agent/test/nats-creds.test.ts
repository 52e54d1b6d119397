import { credsAuthenticator as natsCredsAuthenticator, nkeys } from 'nats';
import { describe, expect, it } from 'vitest';
import { credsAuthenticator } from '../src/nats-creds';

interface NKeys {
  createUser(): { getPublicKey(): string; getSeed(): Uint8Array };
}

/** A creds file as `nsc` and the orchestrator write it, for a user whose JWT names it as subject. */
function credsFor(payload: Record<string, unknown>): { creds: string; publicKey: string } {
  const user = (nkeys as NKeys).createUser();
  const publicKey = user.getPublicKey();
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const jwt = `${part({ typ: 'JWT', alg: 'ed25519-nkey' })}.${part({ sub: publicKey, ...payload })}.c2ln`;
  const seed = new TextDecoder().decode(user.getSeed());
  const creds =
    `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n` +
    `************************* IMPORTANT *************************\nNKEY Seed printed below.\n\n` +
    `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`;
  return { creds, publicKey };
}

describe('credsAuthenticator (Ed25519 through node crypto)', () => {
  it('answers a nonce exactly as nats.js does: same JWT, same nkey, the same signature byte for byte', () => {
    const { creds, publicKey } = credsFor({});
    const ours = credsAuthenticator(creds);
    const theirs = natsCredsAuthenticator(new TextEncoder().encode(creds));
    for (const nonce of ['x', 'nonce-Ut3q9', 'ä-ünïcode-nonce', 'a'.repeat(200)]) {
      const a = ours(nonce) as { jwt: string; nkey: string; sig: string };
      const b = theirs(nonce) as { jwt: string; nkey: string; sig: string };
      expect(a).toEqual(b);
      expect(a.nkey).toBe(publicKey);
      expect(a.sig).not.toBe('');
    }
  });

  it('signs nothing without a nonce, as nats.js', () => {
    const { creds } = credsFor({});
    expect((credsAuthenticator(creds)() as { sig: string }).sig).toBe('');
  });

  it('refuses credentials without both blocks, or whose JWT names no user, saying so', () => {
    const { creds } = credsFor({});
    expect(() => credsAuthenticator(creds.slice(0, creds.indexOf('*')))).toThrow(/a JWT block and a seed block/);
    expect(() => credsAuthenticator('')).toThrow(/a JWT block and a seed block/);
    const account = credsFor({ sub: 'ACCOUNTKEY' }).creds;
    expect(() => credsAuthenticator(account)).toThrow(/names no user/);
    const seed = /^SU[A-Z2-7]+$/m.exec(creds)?.[0] ?? '';
    const badSeed = creds.replace(seed, `${seed.slice(0, -4)}AAAA`);
    expect(() => credsAuthenticator(badSeed)).toThrow(/bad NATS credentials: the seed does not decode/);
    const jwt = creds.split('\n')[1] ?? '';
    expect(() => credsAuthenticator(creds.replace(jwt, 'not.a-jwt.at-all'))).toThrow(/JWT payload is not JSON/);
  });

  it('reads a creds file written with CRLF line ends the same', () => {
    const { creds } = credsFor({});
    const crlf = credsAuthenticator(creds.replace(/\n/g, '\r\n'))('nonce') as { sig: string };
    expect(crlf).toEqual(credsAuthenticator(creds)('nonce'));
  });
});
