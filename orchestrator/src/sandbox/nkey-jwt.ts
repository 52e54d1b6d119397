import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { Codec } from '@nats-io/nkeys/lib/codec.js';
import { Prefix } from '@nats-io/nkeys';

/**
 * NATS user JWTs signed with Node's native Ed25519 (`crypto.sign`) instead of @nats-io/jwt's
 * pure-JS one, which cost 12–25 ms per user here: a warm pool's claim mints one on its critical
 * path. The output is byte for byte @nats-io/jwt's `encodeUser` (test/nkey-jwt.test.ts checks it):
 * the same claim object built in the same key order, the same SHA-512 `jti`, the same signature
 * (Ed25519 is deterministic).
 */

/** An Ed25519 private key from 32 raw seed bytes (PKCS#8 wrapping, RFC 8410). */
function privateKeyOf(rawSeed: Uint8Array): KeyObject {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(rawSeed)]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

function rawPublicKey(key: KeyObject): Uint8Array {
  const jwk = createPublicKey(key).export({ format: 'jwk' }) as { x: string };
  return Buffer.from(jwk.x, 'base64url');
}

export interface NkeySigner {
  /** The nkey public key ("A…" for an account, "U…" for a user). */
  publicKey: string;
  privateKey: KeyObject;
}

const signers = new Map<string, NkeySigner>();

/** The signer of an nkey seed string ("SA…", "SU…"); cached, as an account's seed is used for every user. */
export function signerFromSeed(seed: string): NkeySigner {
  let s = signers.get(seed);
  if (!s) {
    const decoded = Codec.decodeSeed(new TextEncoder().encode(seed));
    const privateKey = privateKeyOf(decoded.buf);
    const publicKey = new TextDecoder().decode(Codec.encode(decoded.prefix, rawPublicKey(privateKey)));
    s = { publicKey, privateKey };
    if (signers.size > 16) signers.clear(); // a few accounts per process: bounded all the same
    signers.set(seed, s);
  }
  return s;
}

/** A new user nkey: its seed ("SU…") and public key ("U…"). */
export function newUserKey(): { seed: string; publicKey: string } {
  const raw = randomBytes(32);
  const publicKey = new TextDecoder().decode(Codec.encode(Prefix.User, rawPublicKey(privateKeyOf(raw))));
  return { seed: new TextDecoder().decode(Codec.encodeSeed(Prefix.User, raw)), publicKey };
}

export interface UserPermissions {
  pub?: { allow?: string[]; deny?: string[] };
  sub?: { allow?: string[]; deny?: string[] };
  resp?: { max: number; ttl: number };
  subs?: number;
  payload?: number;
  data?: number;
}

/**
 * A user JWT as @nats-io/jwt's `encodeUser(name, user, account, permissions, { exp })` makes it
 * (algorithm ed25519-nkey), signed by `account`. `iat` in seconds (default now).
 */
export function encodeUserJwt(
  name: string,
  userPublicKey: string,
  account: NkeySigner,
  permissions: UserPermissions,
  opts: { exp?: number; iat?: number } = {},
): string {
  // Built in @nats-io/jwt's order: its initClaim, then name, sub, nats (defaultUser), setVersionType, encode.
  const claim: Record<string, unknown> = { exp: opts.exp, nbf: undefined, aud: undefined };
  claim.name = name;
  claim.sub = userPublicKey;
  const nats: Record<string, unknown> = { data: -1, payload: -1, subs: -1, ...permissions };
  claim.nats = nats;
  claim.aud = 'NATS';
  nats.type = 'user';
  claim.iss = account.publicKey;
  claim.iat = opts.iat ?? Math.floor(Date.now() / 1000);
  nats.version = 2;
  claim.jti = createHash('sha512').update(JSON.stringify(claim)).digest('base64');
  const header = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claim)).toString('base64url');
  const signature = sign(null, Buffer.from(`${header}.${body}`), account.privateKey).toString('base64url');
  return `${header}.${body}.${signature}`;
}

/** A NATS creds file (the text @nats-io/jwt's fmtCreds writes). */
export function formatCreds(jwt: string, userSeed: string): string {
  return `-----BEGIN NATS USER JWT-----
${jwt}
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
${userSeed}
------END USER NKEY SEED------
`;
}
