import { hash as oneShotHash } from 'node:crypto';
import { canonicalJson, GENESIS_HASH, sha256Hex, type RawEventEnvelope } from '@gatehouse/shared';

export { GENESIS_HASH };

/**
 * An event before it is sealed: every envelope field but `hash` and `mac`. Hashing reads any
 * envelope, typed or not (the verifier hashes a line before it checks its data).
 */
export type UnsealedEvent = Omit<RawEventEnvelope, 'hash' | 'mac'>;

/**
 * The chain hash of an event: SHA-256 of the canonical JSON of every field except `hash` itself
 * and `mac` (which is computed from the hash), prevHash included, so each event commits to the
 * whole history before it. This is the definition; `sealEvent` is the fast path the store and the
 * verifier use, and tests hold the two equal.
 */
export function eventHash(event: UnsealedEvent): string {
  const { hash: _ignored, mac: _mac, ...rest } = event as UnsealedEvent & { hash?: unknown; mac?: unknown };
  return sha256Hex(canonicalJson(rest));
}

/**
 * Hash an event and produce its log line (without the newline) in one pass.
 *
 * The line is exactly `canonicalJson(envelope)`: keys sorted, no whitespace. Writing the canonical
 * form (instead of JSON.stringify) makes every byte of the file meaningful, so the verifier can
 * demand that a line re-encodes to itself and any byte edit, even one that parses to the same
 * value (`\u001f` -> `\u001F`), is detected.
 *
 * Envelope keys in code-point order are actor, causationId, data, hash, id, mac, parentRunId,
 * prevHash, runId, schemaVersion, seq, ts, type; so the hashed text is head + id + tail and the
 * line is head + hash + id + mac + tail, and the (possibly large) `data` is canonicalized once.
 * `mac` is either the MAC already on a line being checked, or a function of the new hash.
 */
export function sealEvent(
  event: UnsealedEvent,
  mac?: string | ((hash: string) => string),
): { hash: string; line: string } {
  const q = quote;
  if (event.data === undefined) throw new TypeError('sealEvent: event has no data');
  const head =
    `{"actor":${q(event.actor)}` +
    `,"causationId":${event.causationId === null ? 'null' : q(event.causationId)}` +
    `,"data":${encodeCanonical(event.data, 0)}`;
  const id = `,"id":${q(event.id)}`;
  const version =
    event.schemaVersion === undefined ? '' : `,"schemaVersion":${encodeCanonical(event.schemaVersion, 0)}`;
  const tail =
    `,"parentRunId":${event.parentRunId === null ? 'null' : q(event.parentRunId)},"prevHash":${q(event.prevHash)}` +
    `,"runId":${q(event.runId)}${version},"seq":${encodeCanonical(event.seq, 0)}` +
    `,"ts":${q(event.ts)},"type":${q(event.type)}}`;
  // crypto.hash (one shot) is sha256Hex without a Hash object per call; same bytes (UTF-8), same digest.
  const hash = oneShotHash('sha256', head + id + tail, 'hex');
  const macText = typeof mac === 'function' ? mac(hash) : mac;
  return { hash, line: `${head},"hash":"${hash}"${id}${macText === undefined ? '' : `,"mac":${q(macText)}`}${tail}` };
}

const MAX_DEPTH = 512;

/** What JSON.stringify escapes in a string: quote, backslash, control characters, surrogates (lone ones). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(s), skipping the call for the common string that needs no escaping. */
function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * The same encoding as `canonicalJson` from @gatehouse/shared (which stays the definition; tests
 * hold the two equal on arbitrary JSON), about twice as fast: it runs on every append and on every
 * line of every verification. A depth bound stands in for the cycle check.
 */
export function encodeCanonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (depth > MAX_DEPTH) throw new TypeError('canonicalJson: circular structure (or nested deeper than 512)');
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const v: unknown = value[i];
          out += (i === 0 ? '' : ',') + (v === undefined ? 'null' : encodeCanonical(v, depth + 1));
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(
          `canonicalJson: only plain objects are allowed, got ${value.constructor?.name ?? 'unknown'}`,
        );
      }
      const obj = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, as canonicalJson's `<` does.
      const keys = Object.keys(obj).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        const v = obj[k];
        if (v === undefined) continue;
        out += `${first ? '' : ','}${quote(k)}:${encodeCanonical(v, depth + 1)}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode ${typeof value}`);
  }
}
