import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { AuditReport } from '../events/audit';
import type { LogKey } from '../events/key';
import { checkStatement, keyFingerprint, makeStatement } from '../events/statement';
import { exitCodeFor } from './exit-codes';

/** Write the signed statement of an intact run; returns the signing key's fingerprint. */
export function exportStatement(file: string, key: LogKey, report: AuditReport): string {
  const statement = makeStatement(key, report, report.firstHash!);
  writeFileSync(file, `${JSON.stringify(statement, null, 2)}\n`);
  return keyFingerprint(statement.publicKey);
}

/** `--public-key` is the key itself (base64 SPKI) or a file holding it. */
function readPublicKey(value: string): string {
  return existsSync(value) ? readFileSync(value, 'utf8').trim() : value.trim();
}

/** `gatehouse verify RUN --statement FILE [--public-key KEY]`: exit 0 matches, 1 does not, 2 unusable statement. */
export function verifyStatement(
  stateDir: string,
  run: string,
  file: string,
  publicKey: string | undefined,
  json: boolean,
): number {
  let r;
  try {
    r = checkStatement(stateDir, run, file, publicKey === undefined ? undefined : readPublicKey(publicKey));
  } catch (e) {
    process.stderr.write(`gatehouse verify: ${(e as Error).message}\n`);
    return exitCodeFor('usage');
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ runId: run, statement: file, ...r })}\n`);
  } else {
    const lines = r.ok
      ? [`ok: run ${run} matches the statement ${file}, signed by key ${r.fingerprint}`]
      : [`FAILED: run ${run} does not match the statement ${file}:`, ...r.problems.map((p) => `  - ${p}`)];
    lines.push(`  artifacts: ${r.artifacts.checked} re-hashed and matching`);
    if (r.after > 0) lines.push(`  ${r.after} event(s) were written after the statement: not covered by it`);
    if (!r.pinned) {
      lines.push(`  note: no --public-key given: compare ${r.fingerprint} with the key the installation published`);
      lines.push('  (a signature by an unknown key proves nothing)');
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return exitCodeFor(r.ok ? 'intact' : 'failed');
}
