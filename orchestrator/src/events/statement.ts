import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '@gatehouse/shared';
import { checkArtifacts, type ArtifactCheck } from './artifact-check';
import type { AuditReport } from './audit';
import type { LogKey } from './key';
import { ARTIFACTS_DIR, EVENTS_FILE, runDir as runDirOf } from './paths';
import { scanLog } from './scan';

/**
 * A signed statement of a run's head, for an auditor who does not hold the installation key:
 * `gatehouse verify RUN --export FILE` writes it after a verification that found the log intact;
 * `gatehouse verify RUN --statement FILE --public-key KEY` checks a log against it anywhere. The
 * signature is Ed25519 (a key derived from the installation key); the public key travels in the
 * statement, and is only worth something when compared with the one the installation published.
 */

export const STATEMENT_KIND = 'gatehouse run head v1';

export interface Statement {
  kind: typeof STATEMENT_KIND;
  runId: string;
  firstHash: string;
  events: number;
  lastHash: string;
  completed: { seq: number; status: string } | null;
  keyId: string;
  /** Ed25519 public key, base64 of its SPKI DER. */
  publicKey: string;
  signedAt: string;
  signature: string;
}

/** A short, comparable name for a public key (SHA-256 of its DER, first 16 hex digits). */
export const keyFingerprint = (publicKey: string): string =>
  createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('hex').slice(0, 16);

export function makeStatement(key: LogKey, report: AuditReport, firstHash: string): Statement {
  if (report.verdict !== 'intact' || report.lastHash === undefined) {
    throw new Error(`run ${report.runId} did not verify intact: nothing to sign`);
  }
  const body: Omit<Statement, 'signature'> = {
    kind: STATEMENT_KIND,
    runId: report.runId,
    firstHash,
    events: report.events,
    lastHash: report.lastHash,
    completed: report.completion,
    keyId: key.id,
    publicKey: key.publicKey(),
    signedAt: new Date().toISOString(),
  };
  return { ...body, signature: key.sign(canonicalJson(body)) };
}

export interface StatementCheck {
  ok: boolean;
  problems: string[];
  /** Events after the statement's head: written later, not covered by it. */
  after: number;
  fingerprint: string;
  pinned: boolean;
  artifacts: ArtifactCheck;
}

function parseStatement(file: string): Statement {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read the statement ${file}: ${(e as Error).message}`);
  }
  const s = raw as Partial<Statement>;
  const strings = ['runId', 'firstHash', 'lastHash', 'keyId', 'publicKey', 'signedAt', 'signature'] as const;
  const shaped = s?.kind === STATEMENT_KIND && strings.every((k) => typeof s[k] === 'string');
  if (!shaped || !Number.isSafeInteger(s.events) || s.completed === undefined) {
    throw new Error(`${file} is not a gatehouse statement (kind "${STATEMENT_KIND}")`);
  }
  return s as Statement;
}

/** Check a run's log against a signed statement, without the installation key. */
export function checkStatement(stateDir: string, runId: string, file: string, pinnedKey?: string): StatementCheck {
  const s = parseStatement(file);
  const problems: string[] = [];
  const { signature, ...body } = s;
  let signed = false;
  try {
    const pub = createPublicKey({ key: Buffer.from(s.publicKey, 'base64'), format: 'der', type: 'spki' });
    signed = verifySignature(null, Buffer.from(canonicalJson(body), 'utf8'), pub, Buffer.from(signature, 'base64'));
  } catch {
    signed = false;
  }
  if (!signed) problems.push("the statement's signature does not verify with the public key it names: it was edited");
  const pinned = pinnedKey !== undefined;
  if (pinned && pinnedKey.trim() !== s.publicKey) {
    const given = keyFingerprint(pinnedKey.trim());
    const signer = keyFingerprint(s.publicKey);
    problems.push(`the statement was signed by key ${signer}, not by the key given with --public-key (${given})`);
  }
  if (s.runId !== runId) problems.push(`the statement is about run ${s.runId}, not ${runId}`);

  const dir = runDirOf(stateDir, runId);
  const scan = scanLog(readFileSync(path.join(dir, EVENTS_FILE)), { runId, keepEvents: true });
  const bad = scan.firstBad;
  if (bad && bad.kind !== 'torn') problems.push(`the log is broken at line ${bad.line}: ${bad.reason}`);
  const events = scan.events;
  const n = events.length;
  if (events[0]?.hash !== s.firstHash) {
    problems.push('the log does not start with the event the statement names: it is another log, or was rewritten');
  } else if (n < s.events) problems.push(`cut tail: the statement records ${s.events} events, the log has ${n}`);
  else if (events[s.events - 1]!.hash !== s.lastHash) {
    problems.push(`event ${s.events - 1} is not the one the statement records: the log was rewritten`);
  }
  const done = s.completed ? events[s.completed.seq] : undefined;
  if (s.completed && done?.type !== 'run.completed') {
    problems.push(`the statement records run.completed at seq ${s.completed.seq}; the log does not have it`);
  } else if (done?.type === 'run.completed' && s.completed && done.data.status !== s.completed.status) {
    problems.push('run.completed differs from the statement');
  }
  const artifacts = checkArtifacts(dir, path.join(dir, ARTIFACTS_DIR), events.slice(0, s.events));
  for (const a of artifacts.bad) problems.push(a.reason);
  const after = Math.max(0, n - s.events);
  return { ok: problems.length === 0, problems, after, fingerprint: keyFingerprint(s.publicKey), pinned, artifacts };
}
