import path from 'node:path';
import { EVENTS_FILE, InvalidRunIdError, listRuns, runDir, type BadEvent } from '../events/index';
import { explicitStateDir } from '../events/state-home';
import { AmbiguousRunError, resolveRun, RunNotFoundError } from '../events/run-ref';
import { auditRun, type AuditReport } from '../events/audit';
import { installationKey } from '../events/installation';
import { LogKeyError } from '../events/key';
import { exportStatement, verifyStatement } from './verify-statement';
import { exitCodeFor } from './exit-codes';

/** What a bad line means for the person reading the report. */
export function badEventMeaning(bad: BadEvent): string {
  if (bad.reason.startsWith('torn last line') || bad.reason.includes('torn write')) {
    return (
      'the last write did not complete (the process was killed or the machine lost power mid-write). ' +
      'Every event before it is intact; resuming the run cuts the partial line off.'
    );
  }
  if (bad.reason.startsWith('cut tail')) {
    return (
      'events were removed from the end of the log after they were written. ' +
      `Events before line ${bad.line} verified; gatehouse refuses to resume this run.`
    );
  }
  if (bad.reason.startsWith('schemaVersion ')) {
    return (
      `from line ${bad.line} on, the log is in a newer format than this gatehouse reads: nothing says it was ` +
      'modified, but this gatehouse cannot check it, nor show or resume the run. Verify it with a newer gatehouse.'
    );
  }
  if (bad.reason.startsWith('artifact')) {
    return 'a stored output was changed or removed after the event that records it was written.';
  }
  return (
    `the log was modified after it was written (or the disk corrupted it). Events before line ${bad.line} verified; ` +
    `from line ${bad.line} on nothing can be trusted, and gatehouse refuses to resume this run.`
  );
}

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

/** One line per check: what was checked and what it showed. */
export function auditCheckLines(r: AuditReport): string[] {
  const out: string[] = [];
  // A cut tail or a bad artifact leaves the chain itself sound.
  const broken = r.firstBad && !r.firstBad.reason.startsWith('cut tail') && !r.firstBad.reason.startsWith('artifact');
  out.push(`chain: ${broken ? `broken at line ${r.firstBad!.line}` : 'intact'}, ${plural(r.events, 'event')} verified`);
  const m = r.macs;
  const foreign = Object.values(m.foreign).reduce((a, b) => a + b, 0);
  out.push(
    r.key
      ? `keyed MACs: ${m.verified} verified with this installation's key (id ${r.key.id})` +
          (m.unkeyed ? `, ${m.unkeyed} old-format without MAC` : '') +
          (foreign ? `, ${foreign} of another installation's key` : '')
      : 'keyed MACs: not checked (no installation key)',
  );
  const h = r.head;
  const at = h.file ? ` (${h.file})` : '';
  const headLine: Record<AuditReport['head']['status'], string> = {
    matched:
      `matches: ${plural(h.events ?? 0, 'event')} recorded at the last sync` +
      `${h.unsynced ? `, ${h.unsynced} appended after it (covered by their MACs only)` : ''}${at}`,
    missing: `none recorded${at}`,
    forged: `cannot be trusted${at}`,
    cut: `records ${plural(h.events ?? 0, 'event')}, the log has fewer${at}`,
    rewritten: `disagrees with the log${at}`,
    'not checked': 'not checked',
  };
  out.push(`head: ${headLine[h.status]}`);
  out.push(
    r.completion
      ? `completion: run.completed at seq ${r.completion.seq} (${r.completion.status})`
      : 'completion: no run.completed (the run is in progress, paused, or stopped without finishing)',
  );
  const a = r.artifacts;
  out.push(
    `artifacts: ${a.checked} re-hashed and matching (${a.full} against a full SHA-256, ` +
      `${a.checked - a.full} against the ref's prefix only)${a.bad.length ? `, ${a.bad.length} bad` : ''}`,
  );
  return out;
}

function print(run: string, r: AuditReport): void {
  const lines: string[] = [];
  if (r.verdict === 'intact') {
    const last = r.lastHash ? ` (last hash ${r.lastHash})` : '';
    lines.push(`ok: run ${run}: ${plural(r.events, 'event')}, hash chain intact${last}, anchored`);
  } else if (r.verdict === 'unanchored') {
    const n = plural(r.events, 'event');
    lines.push(`UNANCHORED: run ${run}: ${n}, hash chain intact, but nothing outside the log vouches for it:`);
    for (const u of r.unanchored) lines.push(`  - ${u}`);
  } else {
    const bad = r.firstBad;
    if (bad) {
      const which = [bad.seq !== undefined ? `seq ${bad.seq}` : null, bad.id ? `id ${bad.id}` : null]
        .filter(Boolean)
        .join(', ');
      lines.push(`FAILED: run ${run}: first bad event at line ${bad.line}${which ? ` (${which})` : ''} of ${r.file}`);
      lines.push(
        `  ${bad.reason}`,
        `  meaning: ${badEventMeaning(bad)}`,
        `  ${plural(r.events, 'event')} before it verified.`,
      );
    } else {
      lines.push(`FAILED: run ${run}: ${r.file}`);
    }
    for (const p of r.problems) if (p !== bad?.reason) lines.push(`  also: ${p}`);
  }
  lines.push('checked:', ...auditCheckLines(r).map((c) => `  ${c}`));
  process.stdout.write(`${lines.join('\n')}\n`);
}

export interface VerifyOptions {
  stateDir?: string;
  json?: boolean;
  /** Write a signed statement of the head (when intact). */
  export?: string;
  /** Check against a signed statement instead, without the installation key. */
  statement?: string;
  publicKey?: string;
}

/**
 * `gatehouse verify RUN`: check a run's log, anchors and artifacts. Exit 0 intact and anchored; 1
 * tampered or torn; 2 usage (a bad or unknown run id, an unusable key); 3 an intact chain that
 * nothing anchors.
 */
/** In a named state directory, an unknown run is answered with the runs that are there. */
function notFound(ref: string, opts: VerifyOptions, e: RunNotFoundError): string {
  const dir = explicitStateDir(opts.stateDir);
  if (dir === undefined) return e.message;
  const runs = listRuns(dir).map((r) => r.runId);
  return (
    `unknown run ${JSON.stringify(ref)} in ${dir}. ` +
    (runs.length > 0
      ? `Runs there: ${runs.join(', ')}.`
      : 'There are no runs there (use --state-dir or GATEHOUSE_STATE_DIR to point elsewhere).')
  );
}

export async function verify(ref: string, opts: VerifyOptions): Promise<number> {
  let stateDir: string;
  let run: string;
  try {
    ({ stateDir, runId: run } = resolveRun(ref, opts));
  } catch (e) {
    // verify promises usage (exit 2) for a run it cannot find, where other commands refuse (exit 1).
    if (!(e instanceof InvalidRunIdError || e instanceof RunNotFoundError || e instanceof AmbiguousRunError)) throw e;
    process.stderr.write(`gatehouse verify: ${e instanceof RunNotFoundError ? notFound(ref, opts, e) : e.message}\n`);
    return exitCodeFor('usage');
  }
  const file = path.join(runDir(stateDir, run), EVENTS_FILE);
  // An auditor's check: against a signed statement, without this installation's key.
  if (opts.statement !== undefined) {
    return verifyStatement(stateDir, run, opts.statement, opts.publicKey, Boolean(opts.json));
  }
  if (opts.publicKey !== undefined) {
    process.stderr.write('gatehouse verify: --public-key goes with --statement FILE\n');
    return exitCodeFor('usage');
  }
  let key;
  try {
    key = installationKey();
  } catch (e) {
    if (!(e instanceof LogKeyError)) throw e;
    process.stderr.write(`gatehouse verify: ${e.message}\n`);
    return exitCodeFor('usage');
  }

  const r = auditRun(stateDir, run, key);
  if (opts.export !== undefined) {
    if (r.verdict !== 'intact' || !key) {
      process.stderr.write(`gatehouse verify: no statement written for run ${run}: it did not verify intact\n`);
    } else {
      const fingerprint = exportStatement(opts.export, key, r);
      process.stderr.write(`gatehouse verify: wrote a statement signed by key ${fingerprint} to ${opts.export}\n`);
    }
  }
  if (opts.json) {
    const { runId: _r, file: _f, ...rest } = r;
    const meaningOf = r.firstBad && r.verdict === 'failed' ? { meaning: badEventMeaning(r.firstBad) } : {};
    const json = { runId: run, file, ok: r.verdict === 'intact', ...rest, ...meaningOf };
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } else {
    print(run, r);
  }
  return exitCodeFor(r.verdict);
}
