import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson, type EventDataOf } from '@gatehouse/shared';
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
export const keyFingerprint = (publicKey: string): string => createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('hex').slice(0, 16);

export function makeStatement(key: LogKey, report: AuditReport, firstHash: string): Statement {
  if (report.verdict !== 'intact' || report.lastHash === undefined) throw new Error(`run ${report.runId} did not verify intact: nothing to sign`);
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
  if (s?.kind !== STATEMENT_KIND || strings.some((k) => typeof s[k] !== 'string') || !Number.isSafeInteger(s.events) || s.completed === undefined) {
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
  if (pinned && pinnedKey.trim() !== s.publicKey) problems.push(`the statement was signed by key ${keyFingerprint(s.publicKey)}, not by the key given with --public-key (${keyFingerprint(pinnedKey.trim())})`);
  if (s.runId !== runId) problems.push(`the statement is about run ${s.runId}, not ${runId}`);

  const dir = runDirOf(stateDir, runId);
  const scan = scanLog(readFileSync(path.join(dir, EVENTS_FILE)), { runId, keepEvents: true });
  if (scan.firstBad && scan.firstBad.kind !== 'torn') problems.push(`the log is broken at line ${scan.firstBad.line}: ${scan.firstBad.reason}`);
  const events = scan.events;
  if (events[0]?.hash !== s.firstHash) problems.push('the log does not start with the event the statement names: it is another log, or was rewritten');
  else if (events.length < s.events) problems.push(`cut tail: the statement records ${s.events} events, the log has ${events.length}`);
  else if (events[s.events - 1]!.hash !== s.lastHash) problems.push(`event ${s.events - 1} is not the one the statement records: the log was rewritten`);
  if (s.completed && events[s.completed.seq]?.type !== 'run.completed') problems.push(`the statement records run.completed at seq ${s.completed.seq}; the log does not have it`);
  else if (s.completed && (events[s.completed.seq]!.data as EventDataOf<'run.completed'>).status !== s.completed.status) problems.push('run.completed differs from the statement');
  const artifacts = checkArtifacts(dir, path.join(dir, ARTIFACTS_DIR), events.slice(0, s.events));
  for (const a of artifacts.bad) problems.push(a.reason);
  return { ok: problems.length === 0, problems, after: Math.max(0, events.length - s.events), fingerprint: keyFingerprint(s.publicKey), pinned, artifacts };
}
