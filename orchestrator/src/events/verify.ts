import { readFileSync } from 'node:fs';
import { scanLog, type BadEvent } from './scan';

export type { BadEvent } from './scan';

export interface VerifyResult {
  ok: boolean;
  /** Events that verified (all of them when ok; those before firstBad otherwise). */
  events: number;
  /** Hash of the last event that verified: what a later check can anchor to. */
  lastHash?: string;
  firstBad?: BadEvent;
}

/**
 * Check a run's log end to end: every line is canonical JSON of a valid envelope, seq runs 0, 1,
 * 2, ... with one runId, each prevHash is the previous event's hash (GENESIS for the first), each
 * hash recomputes, and each `data` matches its type's schema. Reports the first bad line only:
 * after it, nothing can be trusted anyway.
 *
 * What the chain cannot show by itself: events cut off the END of the log (the remaining prefix is
 * a valid log). Anchoring the last hash elsewhere (a parent run's log, a report) is what catches that.
 */
export function verifyLog(file: string): VerifyResult {
  const scan = scanLog(readFileSync(file));
  const result: VerifyResult = { ok: scan.firstBad === undefined, events: scan.count };
  if (scan.count > 0) result.lastHash = scan.lastHash;
  if (scan.firstBad) {
    const { kind: _kind, ...bad } = scan.firstBad;
    result.firstBad = bad;
  }
  return result;
}
