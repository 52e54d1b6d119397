import { actionHash, canonicalJson } from '@gatehouse/shared';

/** A hash of a call's arguments for its observation's provenance; input that cannot be hashed says so. */
export function argsHashOf(input: unknown): string {
  try {
    return actionHash({ name: 'args', input: input ?? null });
  } catch {
    return 'unhashable';
  }
}

/** Model input is JSON in practice; anything else (NaN, cycles, functions) is described, not stored. */
export function jsonSafe(value: unknown): unknown {
  try {
    canonicalJson(value ?? null);
    return value ?? null;
  } catch {
    return { unrepresentable: canonicalOrDescribe(value) };
  }
}

/** Any value as text for a message: its JSON when it has one, else what kind of thing it is. */
export function canonicalOrDescribe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
