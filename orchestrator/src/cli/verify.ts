import path from 'node:path';
import { EVENTS_FILE, InvalidRunIdError, listRuns, runDir } from '../events/index';
import { explicitStateDir } from '../events/state-home';
import { AmbiguousRunError, resolveRun, RunNotFoundError } from '../events/run-ref';
import { auditRun, type AuditReport } from '../events/audit';
import { installationKey } from '../events/installation';
import { LogKeyError } from '../events/key';
import { exportStatement, verifyStatement } from './verify-statement';
import { exitCodeFor } from './exit-codes';
import { auditCheckLines, badEventMeaning, plural } from '../events/audit-lines';

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
