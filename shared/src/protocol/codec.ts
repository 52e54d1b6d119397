import type { z } from 'zod';

/**
 * JSON over NATS, validated on decode. A message that fails is reported with the schema path of
 * the first bad field, which is what a caller needs to fix it.
 */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string; path: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

export function encodeMessage<T>(schema: z.ZodType<T>, value: T): Uint8Array {
  // Validate outgoing messages too: a bug on our side should fail here, loudly, not in the peer.
  return encoder.encode(JSON.stringify(schema.parse(value)));
}

export function decodeMessage<T>(schema: z.ZodType<T>, bytes: Uint8Array): Decoded<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(bytes));
  } catch (e) {
    return { ok: false, error: `not JSON: ${(e as Error).message}`, path: '' };
  }
  return validate(schema, raw);
}

export function validate<T>(schema: z.ZodType<T>, raw: unknown): Decoded<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue ? issue.path.map(String).join('.') : '';
  return { ok: false, error: issue ? `${path || '(root)'}: ${issue.message}` : 'invalid', path };
}
