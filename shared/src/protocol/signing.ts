import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../canonical';

/**
 * Invocations are signed by the orchestrator with a key made for one sandbox and held only in its
 * memory; the daemon is given the public half and runs nothing that does not verify. Holding NATS
 * credentials that may publish on the sandbox's subjects (the orchestrator's, or a daemon's taken
 * by a command) is then not enough to make the daemon run anything.
 *
 * What is signed is the canonical JSON of the whole message except `signature`, exactly as sent:
 * every field that decides what runs (primitive, input, approval, run, sandbox, id, limits).
 */
export interface InvocationKeys {
  privateKey: KeyObject;
  /** SPKI PEM, handed to the daemon. */
  publicKeyPem: string;
}

export function invocationKeys(): InvocationKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** What a signature looks like on the wire: 64 bytes of Ed25519 in base64. */
export const SIGNATURE_PATTERN = /^[A-Za-z0-9+/]{86}==$/;

function signedBytes(message: object): Buffer {
  return Buffer.from(canonicalJson({ ...message, signature: undefined }), 'utf8');
}

/** The base64 Ed25519 signature of a message (any `signature` member is left out of what is signed). */
export function signMessage(message: object, key: KeyObject): string {
  return sign(null, signedBytes(message), key).toString('base64');
}

/** Loads the public key the daemon verifies with; throws on anything but an Ed25519 SPKI PEM. */
export function invocationPublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`the invocation key is ${key.asymmetricKeyType}, not ed25519`);
  return key;
}

/**
 * Whether a message as received (parsed JSON, not yet validated) carries a valid signature. Never
 * throws: anything malformed is simply not verified.
 */
export function verifyMessage(raw: unknown, key: KeyObject): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const signature = (raw as { signature?: unknown }).signature;
  if (typeof signature !== 'string' || !SIGNATURE_PATTERN.test(signature)) return false;
  try {
    return verify(null, signedBytes(raw), key, Buffer.from(signature, 'base64'));
  } catch {
    // canonicalJson refuses values JSON cannot carry exactly; such a message was never signed.
    return false;
  }
}
