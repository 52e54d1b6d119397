import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EventEnvelope } from '@gatehouse/shared';
import { checkArtifacts, type ArtifactCheck } from './artifact-check';
import { readHead } from './heads';
import type { LogKey } from './key';
import { ARTIFACTS_DIR, EVENTS_FILE, runDir as runDirOf } from './paths';
import { scanLog, type BadEvent, type MacTally } from './scan';

/**
 * `gatehouse verify` as a whole: the hash chain, each event's keyed MAC, the run's head (recorded
 * apart from the log), completion, and every artifact against its recorded hash.
 *
 * Verdicts: `intact` (everything checked and anchored), `failed` (evidence of tampering or a torn
 * write), `unanchored` (the chain is sound, but nothing outside the log vouches for it: old-format
 * events, another installation's key, no key, or no head, so a cut tail or a rewrite with recomputed
 * hashes cannot be ruled out).
 */

export type Verdict = 'intact' | 'failed' | 'unanchored';

export interface HeadCheck {
  status: 'matched' | 'missing' | 'forged' | 'cut' | 'rewritten' | 'not checked';
  file?: string;
  /** Events the head records, and the seq of run.completed among them. */
  events?: number;
  completedSeq?: number | null;
  /** Events after the head (appended after the last sync): protected by their MACs only. */
  unsynced?: number;
}

export interface AuditReport {
  runId: string;
  file: string;
  verdict: Verdict;
  events: number;
  /** Hash of event 0 (with the run id, it names the log). */
  firstHash?: string;
  lastHash?: string;
  /** The first event that is bad (for a cut tail: the first one missing). */
  firstBad?: BadEvent;
  torn: boolean;
  key: { file: string; id: string } | null;
  macs: MacTally;
  head: HeadCheck;
  completion: { seq: number; status: string } | null;
  artifacts: ArtifactCheck;
  /** What makes the verdict `failed`. */
  problems: string[];
  /** What keeps it from being `intact` without proving tampering. */
  unanchored: string[];
}

export function auditRun(stateDir: string, runId: string, key: LogKey | undefined): AuditReport {
  const dir = runDirOf(stateDir, runId);
  const file = path.join(dir, EVENTS_FILE);
  const scan = scanLog(readFileSync(file), { runId, keepEvents: true, ...(key ? { key } : {}) });
  const events = scan.events;
  const problems: string[] = [];
  const unanchored: string[] = [];
  const torn = scan.firstBad?.kind === 'torn';
  const report: AuditReport = {
    runId,
    file,
    verdict: 'intact',
    events: scan.count,
    torn,
    key: key ? { file: key.location.keyFile, id: key.id } : null,
    macs: scan.macs,
    head: { status: 'not checked' },
    completion: null,
    artifacts: { checked: 0, full: 0, bad: [] },
    problems,
    unanchored,
  };
  if (scan.count > 0) {
    report.firstHash = events[0]!.hash;
    report.lastHash = scan.lastHash;
  }
  if (scan.firstBad) {
    const { kind: _kind, ...bad } = scan.firstBad;
    report.firstBad = bad;
    problems.push(bad.reason);
  }

  if (!key) {
    const where = 'GATEHOUSE_KEY_FILE, else ~/.config/gatehouse/log.key';
    unanchored.push(`no installation key (${where}) on this machine: MACs and head not checked`);
  }
  if (scan.macs.unkeyed > 0) {
    const n = scan.macs.unkeyed;
    unanchored.push(
      `${n} event(s) in the old format (schemaVersion 1, no MAC): ` +
        'an edit with recomputed hashes cannot be detected in them',
    );
  }
  for (const [id, n] of Object.entries(scan.macs.foreign)) {
    unanchored.push(
      `${n} event(s) carry MACs of another installation's key (id ${id}): ` +
        'written elsewhere (or copied here), not checkable with this key',
    );
  }

  // The head and completion speak about the whole log: only meaningful when the chain read is sound
  // (a torn last line is an unsynced write, which the head never covers).
  if (key && events.length > 0 && (!scan.firstBad || torn)) checkHeadOf(key, runId, events, report);
  const completed = events.findLast((e) => e.type === 'run.completed');
  if (completed) {
    report.completion = { seq: completed.seq, status: completed.data.status };
  }

  report.artifacts = checkArtifacts(dir, path.join(dir, ARTIFACTS_DIR), events);
  for (const a of report.artifacts.bad) problems.push(a.reason);
  if (!report.firstBad && report.artifacts.bad.length > 0) {
    const seq = report.artifacts.bad[0]!.seq;
    report.firstBad = { line: seq + 1, seq, id: events[seq]!.id, reason: report.artifacts.bad[0]!.reason };
  }
  report.verdict = problems.length > 0 ? 'failed' : unanchored.length > 0 ? 'unanchored' : 'intact';
  return report;
}

function checkHeadOf(key: LogKey, runId: string, events: readonly EventEnvelope[], report: AuditReport): void {
  const found = readHead(key, runId, events[0]!.hash);
  if (found.status === 'forged') {
    report.head = { status: 'forged', file: found.file };
    report.problems.push(`the run's head ${found.file} cannot be trusted: ${found.reason}`);
    return;
  }
  if (found.status === 'missing') {
    report.head = { status: 'missing', file: found.file };
    if (found.otherHeads.length > 0) {
      report.problems.push(
        `no head for this log, but ${found.otherHeads.join(', ')} records run ${runId} with another first event: ` +
          'the log was rewritten from its start (or another run was given the same id)',
      );
    } else if (report.macs.verified > 0) {
      report.unanchored.push(
        `no head recorded for this run (${found.file}): it never synced (it stopped before its first side effect), ` +
          'or the heads directory was lost; a cut tail cannot be ruled out',
      );
    } else {
      report.unanchored.push('no head recorded for this run on this installation: a cut tail cannot be ruled out');
    }
    return;
  }
  const head = found.head;
  const base = { file: found.file, events: head.events, completedSeq: head.completedSeq };
  if (events.length < head.events) {
    const completed = head.completedSeq !== null ? `, run.completed at seq ${head.completedSeq}` : '';
    report.head = { status: 'cut', ...base };
    const n = events.length;
    report.problems.push(
      `cut tail: the run's head records ${head.events} events${completed}; ` +
        `the log has ${n} (events ${n}..${head.events - 1} were cut off)`,
    );
    report.firstBad ??= { line: n + 1, seq: n, reason: `cut tail: event ${n} and after are missing` };
    return;
  }
  if (events[head.events - 1]!.hash !== head.hash) {
    report.head = { status: 'rewritten', ...base };
    const last = head.events - 1;
    const reason = `event ${last} is not the one the run's head recorded: the log was rewritten at or before it`;
    report.problems.push(reason);
    report.firstBad ??= { line: head.events, seq: last, id: events[last]!.id, reason };
    return;
  }
  if (head.completedSeq !== null && events[head.completedSeq]?.type !== 'run.completed') {
    report.head = { status: 'rewritten', ...base };
    const seq = head.completedSeq;
    report.problems.push(`the run's head records run.completed at seq ${seq}; the log does not have it there`);
    return;
  }
  report.head = { status: 'matched', ...base, unsynced: events.length - head.events };
}
