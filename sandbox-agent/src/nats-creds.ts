import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { nkeys, type Authenticator } from 'nats';

/** What this uses of nats.js's nkeys (typed `any` there). */
interface NKeys {
  fromSeed(seed: Uint8Array): { getRawSeed(): Uint8Array };
}

/** A creds file's two armoured blocks: the user's JWT, then its nkey seed. */
const BLOCK = /-{3,}[^\n]*-{3,}\r?\n\s*([^\r\n]+?)\s*\r?\n\s*-{3,}[^\n]*-{3,}/g;
/** PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * nats.js's credsAuthenticator, with the nonce signed by node's crypto (OpenSSL) instead of tweetnacl
 * in JavaScript: in a daemon that has just started (a cold JIT, one CPU) deriving the key pair and
 * signing took 25–33 ms of every sandbox start here, under a millisecond this way. Same answer:
 * Ed25519 is deterministic, so the signature is byte for byte the one nkeys makes (nats-creds.test.ts).
 */
export function credsAuthenticator(creds: string): Authenticator {
  const blocks = [...creds.matchAll(BLOCK)].map((m) => m[1] ?? '');
  const [jwt, seed] = blocks;
  if (!jwt || !seed) throw new Error('bad NATS credentials: expected a JWT block and a seed block');
  const key = privateKey(seed);
  const nkey = subjectOf(jwt);
  return (nonce?: string) => ({
    jwt,
    nkey,
    sig: nonce ? sign(null, Buffer.from(nonce, 'utf8'), key).toString('base64') : '',
  });
}

function privateKey(seed: string): KeyObject {
  // Decoding the seed (base32, CRC checked) is cheap; it is deriving the public key that costs.
  let raw: Uint8Array;
  try {
    raw = (nkeys as NKeys).fromSeed(new TextEncoder().encode(seed)).getRawSeed();
  } catch (e) {
    throw new Error(`bad NATS credentials: the seed does not decode (${(e as Error).message})`);
  }
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, Buffer.from(raw)]), format: 'der', type: 'pkcs8' });
}

/** The user's public nkey, which its JWT names as subject (the server checks the signature against it). */
function subjectOf(jwt: string): string {
  let sub: unknown;
  try {
    const payload = jwt.split('.')[1] ?? '';
    sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
  } catch {
    throw new Error('bad NATS credentials: the JWT payload is not JSON');
  }
  if (typeof sub !== 'string' || !sub.startsWith('U')) throw new Error('bad NATS credentials: the JWT names no user');
  return sub;
}
