import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by code point, no whitespace, `undefined` members dropped.
 * Two inputs that mean the same thing hash the same, so an approval bound to a hash cannot be
 * dodged by reordering keys. Values JSON cannot represent exactly are refused instead of being
 * silently coerced (JSON.stringify turns NaN into null, which would make two actions collide).
 */
export function canonicalJson(value: unknown): string {
  return encode(value, new Set());
}

function encode(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case 'object': {
      if (seen.has(value)) throw new TypeError('canonicalJson: circular structure');
      seen.add(value);
      try {
        if (Array.isArray(value))
          return `[${value.map((v) => (v === undefined ? 'null' : encode(v, seen))).join(',')}]`;
        const proto = Object.getPrototypeOf(value) as unknown;
        if (proto !== Object.prototype && proto !== null) {
          throw new TypeError(
            `canonicalJson: only plain objects are allowed, got ${value.constructor?.name ?? 'unknown'}`,
          );
        }
        const entries = Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${encode(v, seen)}`).join(',')}}`;
      } finally {
        seen.delete(value);
      }
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode ${typeof value}`);
  }
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The hash an approval is bound to: what will run (primitive or tool name) and its exact input. */
export function actionHash(action: { name: string; input: unknown }): string {
  return sha256Hex(canonicalJson({ input: action.input, name: action.name }));
}

/** How often `needle` occurs in `text`, counting up to `max` (enough to say "not unique"). */
export function countOccurrences(text: string, needle: string, max = 1000): number {
  let count = 0;
  for (let i = text.indexOf(needle); i >= 0 && count < max; i = text.indexOf(needle, i + 1)) count++;
  return count;
}
