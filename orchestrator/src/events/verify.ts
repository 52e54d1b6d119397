import { readFileSync } from 'node:fs';
import { installationKey } from './installation';
import type { LogKey } from './key';
import { scanLog, type BadEvent, type MacTally } from './scan';

export type { BadEvent } from './scan';

export interface VerifyResult {
  ok: boolean;
  /** Events that verified (all of them when ok; those before firstBad otherwise). */
  events: number;
  /** Hash of the last event that verified: what a later check can anchor to. */
  lastHash?: string;
  firstBad?: BadEvent;
  /** The events' keyed MACs: verified with the installation key, old-format, or another installation's. */
  macs: MacTally;
}

/**
 * Check a run's log end to end: every line is canonical JSON of a valid envelope, seq runs 0, 1,
 * 2, ... with one runId, each prevHash is the previous event's hash (GENESIS for the first), each
 * hash recomputes, and each `data` matches its type's schema. Reports the first bad line only:
 * after it, nothing can be trusted anyway.
 *
 * With a key (by default the installation's, when there is one), each event's MAC is checked too,
 * so a chain recomputed after an edit fails at the first edited event.
 *
 * What the chain cannot show by itself: events cut off the END of the log (the remaining prefix is
 * a valid log). The run's head, recorded apart from the log, catches that: see `auditRun`.
 */
export function verifyLog(file: string, opts: { key?: LogKey | null } = {}): VerifyResult {
  const key = opts.key === undefined ? installationKey() : opts.key;
  const scan = scanLog(readFileSync(file), key ? { key } : {});
  const result: VerifyResult = { ok: scan.firstBad === undefined, events: scan.count, macs: scan.macs };
  if (scan.count > 0) result.lastHash = scan.lastHash;
  if (scan.firstBad) {
    const { kind: _kind, ...bad } = scan.firstBad;
    result.firstBad = bad;
  } else if (scan.macs.firstForeign) {
    // Not proven forged, but not proven sound: what cannot be checked is not reported intact.
    result.ok = false;
    result.firstBad = scan.macs.firstForeign;
  }
  return result;
}
