import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import type { RunState } from './state';

/**
 * The hash a `model.request` records of the run's state as folded from the events before it: a
 * replay folds the log again and must arrive at the same hash (events are the only source of state).
 */
export function stateSha256(state: RunState): string {
  // A run that is not a plan run hashes as it did before plan mode existed: replays of older logs still match.
  const { plan, ...rest } = state;
  return sha256Hex(canonicalJson(plain(plan.planMode ? state : rest)));
}

/** Sets become sorted arrays and Maps plain objects, so the state has one canonical JSON. */
function plain(value: unknown): unknown {
  if (value instanceof Set) return [...value].map(plain).sort(byJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function byJson(a: unknown, b: unknown): number {
  const x = canonicalJson(a);
  const y = canonicalJson(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
