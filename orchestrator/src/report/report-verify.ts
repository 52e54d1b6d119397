import { auditRun } from '../events/audit';
import { installationKey } from '../events/installation';
import type { LogKey } from '../events/key';
import { auditCheckLines, badEventMeaning } from '../events/audit-lines';
import type { ReportVerify } from './report-agent-schema';

/** The installation's key for checking logs, or why it cannot be used (a verify of each log then says so). */
export type ReportKey = { key: LogKey | undefined } | { error: string } | { skip: string };

export function reportKey(): ReportKey {
  try {
    return { key: installationKey() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/**
 * `gatehouse verify RUN` of one log, by the same audit and in the same words (events/audit.ts,
 * cli/verify.ts): the report shows what verify would print, and never a verdict of its own.
 */
export function verifyOf(stateDir: string, runId: string, key: ReportKey): ReportVerify {
  const notChecked = (why: string): ReportVerify => ({
    verdict: 'not_checked',
    events: 0,
    lastHash: null,
    checks: [],
    problems: [why],
    unanchored: [],
    firstBad: null,
  });
  if ('skip' in key) return notChecked(key.skip);
  if ('error' in key) return notChecked(`the installation key cannot be used: ${key.error}`);
  let r;
  try {
    r = auditRun(stateDir, runId, key.key);
  } catch (e) {
    return notChecked(`the log cannot be read: ${(e as Error).message}`);
  }
  return {
    verdict: r.verdict,
    events: r.events,
    lastHash: r.lastHash ?? null,
    checks: auditCheckLines(r),
    problems: r.problems,
    unanchored: r.unanchored,
    firstBad: r.firstBad
      ? { line: r.firstBad.line, reason: r.firstBad.reason, meaning: badEventMeaning(r.firstBad) }
      : null,
  };
}
