import type { FailureClass } from '@gatehouse/shared';
import { DEFAULT_RECOVERY, type RecoveryClassConfig, type RecoveryConfig } from '../plan/recovery-recipes';

/**
 * The repository's `recovery` narrowed against the trusted one (or the defaults), as budgets are:
 * the repository may only make recovery do less on its own. Per class:
 *  - retries: no more than the trusted number;
 *  - backoffMs: each wait no shorter than the trusted wait at that retry (a shorter wait would
 *    hammer a rate-limited service harder; a longer one only costs the run's own wall clock);
 *  - exhausted: "fail" is always taken (stopping does less), "escalate" only where the trusted one is;
 *  - action: "escalate" is always taken (a person decides), another action only if it is the trusted one.
 * What is not taken is listed in `ignored` with its key.
 */
export function narrowRecovery(
  trusted: RecoveryConfig | undefined,
  asked: RecoveryConfig | undefined,
  ignored: string[],
): RecoveryConfig | undefined {
  if (asked === undefined) return trusted;
  const out: RecoveryConfig = structuredClone(trusted ?? {});
  for (const cls of Object.keys(DEFAULT_RECOVERY) as FailureClass[]) {
    const a = asked[cls];
    if (a === undefined) continue;
    const t = { ...DEFAULT_RECOVERY[cls], ...trusted?.[cls] };
    const kept: RecoveryClassConfig = { ...out[cls] };
    const at = `recovery.${cls}`;
    if (a.retries !== undefined) {
      if (a.retries <= t.retries) kept.retries = a.retries;
      else ignored.push(`${at}.retries ${a.retries} (above ${t.retries})`);
    }
    if (a.backoffMs !== undefined) {
      if (noShorter(a.backoffMs, t.backoffMs)) kept.backoffMs = a.backoffMs;
      else
        ignored.push(
          `${at}.backoffMs ${JSON.stringify(a.backoffMs)} (a wait shorter than ${JSON.stringify(t.backoffMs)})`,
        );
    }
    if (a.exhausted !== undefined) {
      if (a.exhausted === 'fail' || t.exhausted === 'escalate') kept.exhausted = a.exhausted;
      else ignored.push(`${at}.exhausted ${a.exhausted} (the trusted recipe fails the task)`);
    }
    if (a.action !== undefined) {
      if (a.action === 'escalate' || a.action === t.action) kept.action = a.action;
      else ignored.push(`${at}.action ${a.action} (only "escalate" or the trusted ${t.action})`);
    }
    if (Object.keys(kept).length > 0) out[cls] = kept;
  }
  return out;
}

/** Each wait at least the trusted wait before the same retry (the last value of either list repeats). */
function noShorter(asked: readonly number[], trusted: readonly number[]): boolean {
  if (trusted.length === 0) return true;
  const at = (list: readonly number[], i: number): number => list[Math.min(i, list.length - 1)] ?? 0;
  const n = Math.max(asked.length, trusted.length);
  return Array.from({ length: n }, (_, i) => i).every((i) => at(asked, i) >= at(trusted, i));
}
