import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson, type EventEnvelope } from '@gatehouse/shared';
import { fsyncDir } from './artifacts';
import type { LogKey } from './key';

/**
 * A run's head, recorded apart from its log (beside the installation key): how many events the
 * log had at its last sync, the hash of the last one, and whether `run.completed` was among them,
 * under a MAC of the installation key. A log shorter than its head, or one that differs at the
 * head's sequence, was cut or rewritten.
 *
 * Heads are named by run id and the hash of the run's first event, not by the state directory:
 * a state directory can be moved or copied and still verify, while the first event (whose MAC
 * verifies) cannot be forged.
 */

export interface RunHead {
  runId: string;
  /** Hash of event 0: with the run id, names the log this head belongs to. */
  firstHash: string;
  /** Events in the log at the last sync (the last one has seq `events - 1`). */
  events: number;
  /** Hash of event `events - 1`. */
  hash: string;
  /** Seq of the last `run.completed` among them, or null while the run has not finished. */
  completedSeq: number | null;
  keyId: string;
  updated: string;
}

export type HeadLookup =
  | { status: 'found'; head: RunHead; file: string }
  | { status: 'missing'; file: string; otherHeads: string[] }
  | { status: 'forged'; file: string; reason: string };

export const headFileName = (runId: string, firstHash: string): string => `${runId}.${firstHash.slice(0, 32)}.json`;

function headText(head: RunHead): string {
  return canonicalJson(head);
}

/** Write a run's head atomically (temporary file, fsync, rename): a crash leaves the old head or the new one. */
export function writeHead(key: LogKey, head: RunHead): string {
  const dir = key.location.headsDir;
  const first = !dirReady.has(dir);
  if (first) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    dirReady.add(dir);
  }
  const file = path.join(dir, headFileName(head.runId, head.firstHash));
  const tmp = path.join(dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  const body = `${JSON.stringify({ ...head, mac: key.macHead(headText(head)) })}\n`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, body);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, file);
  if (first) fsyncDir(dir);
  return file;
}

const dirReady = new Set<string>();

const isHex64 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

/** The head recorded for a run, checked against the key. */
export function readHead(key: LogKey, runId: string, firstHash: string): HeadLookup {
  const dir = key.location.headsDir;
  const file = path.join(dir, headFileName(runId, firstHash));
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return { status: 'missing', file, otherHeads: otherHeads(dir, runId, path.basename(file)) };
  }
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { status: 'forged', file, reason: 'the head file is not JSON' };
  }
  const { mac, ...rest } = raw;
  const head = rest as unknown as RunHead;
  const shaped =
    head.runId === runId &&
    head.firstHash === firstHash &&
    Number.isSafeInteger(head.events) &&
    head.events > 0 &&
    isHex64(head.hash) &&
    (head.completedSeq === null || (Number.isSafeInteger(head.completedSeq) && head.completedSeq < head.events)) &&
    typeof head.keyId === 'string' &&
    typeof head.updated === 'string' &&
    Object.keys(rest).length === 7;
  if (!shaped) return { status: 'forged', file, reason: 'the head file does not have the shape gatehouse writes' };
  if (head.keyId !== key.id) {
    const reason = `the head was made with another key (id ${head.keyId}, this installation's is ${key.id})`;
    return { status: 'forged', file, reason };
  }
  if (typeof mac !== 'string' || !key.checkHeadMac(headText(head), mac)) {
    const reason = "the head's MAC does not verify with this installation's key: it was edited or made elsewhere";
    return { status: 'forged', file, reason };
  }
  return { status: 'found', head, file };
}

/** Heads for the same run id but another first event: the log may have been rewritten from its start. */
function otherHeads(dir: string, runId: string, except: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  // `<runId>.<32 hex>.json`: the run id, a dot, 32 digits, `.json`.
  const length = runId.length + 38;
  return names.filter((n) => n !== except && n.length === length && n.startsWith(`${runId}.`) && n.endsWith('.json'));
}

/**
 * The log as read must reach its recorded head and agree with it there: the head's event count
 * (0 when there is none: an old log, one written elsewhere, or one never synced), or why the log
 * cannot be trusted (the store refuses to open it).
 */
export function checkAgainstHead(
  key: LogKey,
  runId: string,
  events: readonly EventEnvelope[],
): { events: number } | { refusal: string } {
  if (events.length === 0) return { events: 0 };
  const found = readHead(key, runId, events[0]!.hash);
  if (found.status === 'forged') return { refusal: `its head ${found.file} cannot be trusted (${found.reason})` };
  if (found.status === 'missing' && found.otherHeads.length > 0) {
    // A head exists for this run id, but for another first event: the log was rewritten from its start.
    const heads = found.otherHeads.join(', ');
    return { refusal: `its first event is not the one recorded for run ${runId} (${heads}): the log was rewritten` };
  }
  if (found.status !== 'found') return { events: 0 };
  const head = found.head;
  if (events.length < head.events) {
    const completed = head.completedSeq !== null ? `, run.completed at seq ${head.completedSeq}` : '';
    return {
      refusal: `cut tail: the log ends after ${events.length} events but its head records ${head.events}${completed}`,
    };
  }
  if (events[head.events - 1]!.hash !== head.hash) {
    return { refusal: `event ${head.events - 1} differs from the one its head recorded: the log was rewritten` };
  }
  return { events: head.events };
}
