import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { JetStreamManager, KV, ObjectStore } from 'nats';
import type { EventEnvelope } from '@gatehouse/shared';
import { writeHead } from '../events/heads';
import type { LogKey } from '../events/key';
import { acquireWriterLock } from '../events/lock';
import { EventLogCorruptError } from '../events/log-errors';
import { EVENTS_FILE, runDir as runDirOf } from '../events/paths';
import { scanLog } from '../events/scan';
import { eventMsgId, runSubject, type StoreNames } from './names';
import { decodeStoreHead } from './run-head-record';
import { downloadRunFiles } from './run-files';
import { retryThroughFailover } from './failover-retry';
import { subjectMessages } from './stream-transport';
import { RunNotStoredError } from './store-errors';

export interface StoreContext {
  url: string;
  jsm: JetStreamManager;
  names: StoreNames;
  key: LogKey;
  heads: KV;
  files: ObjectStore;
}

export interface StoredRun {
  /** The run's log as JSONL, every event's chain and MAC verified. */
  jsonl: Buffer;
  events: EventEnvelope[];
  /** Stream sequence of its last event: a writer continuing the run expects it. */
  lastStreamSeq: number;
}

/**
 * A run's log read from its subject and checked as `verify` checks a file (hash chain, schema, and
 * every event's MAC under this installation's key), plus the message ids and the store's head.
 * A gap, a reordering, a forged or foreign event refuses it with EventLogCorruptError.
 */
export async function readStoredRun(ctx: StoreContext, runId: string): Promise<StoredRun> {
  const subject = runSubject(ctx.names, runId);
  const where = `${ctx.url} ${subject}`;
  const lines: string[] = [];
  let lastStreamSeq = 0;
  for await (const m of subjectMessages(ctx.jsm, ctx.names.stream, subject)) {
    const want = eventMsgId(runId, lines.length);
    if (m.msgId !== want) {
      const found = m.msgId ?? '(none)';
      const reason = `stream message ${m.seq} has id ${found} where ${want} was expected (a gap or another writer)`;
      throw new EventLogCorruptError(where, { line: lines.length + 1, seq: lines.length, reason }, runId);
    }
    lines.push(m.data);
    lastStreamSeq = m.seq;
  }
  if (lines.length === 0)
    throw new RunNotStoredError(
      `run ${runId} is not in the store ${ctx.url} (no events on ${subject}): check the run id`,
    );
  const jsonl = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
  const scan = scanLog(jsonl, { runId, keepEvents: true, key: ctx.key });
  if (scan.firstBad) throw new EventLogCorruptError(where, scan.firstBad, runId);
  if (scan.macs.verified !== scan.count) {
    const unkeyed = scan.count - scan.macs.verified;
    const reason = `${unkeyed} of its ${scan.count} events carry no MAC of this installation's key`;
    throw new EventLogCorruptError(where, { line: scan.count, reason }, runId);
  }
  // The head is required: without it a stream made again with a genuine prefix of the run (the
  // old one deleted, which deny-delete does not prevent) could not be told from the whole run.
  const entry = await retryThroughFailover(() => ctx.heads.get(runId));
  if (!entry || entry.operation !== 'PUT') {
    const reason =
      'the store holds no head for it (deleted, or its writer stopped before its first flush), so whether ' +
      'events are missing from its end cannot be checked; resume it where its local copy is, or export that';
    throw new EventLogCorruptError(where, { line: scan.count, reason }, runId);
  }
  const head = decodeStoreHead(ctx.key, entry.string());
  const stream = (await retryThroughFailover(() => ctx.jsm.streams.info(ctx.names.stream))).created;
  const bad =
    'refusal' in head
      ? head.refusal
      : head.stream !== undefined && head.stream !== stream
        ? `its head was written to a stream made ${head.stream}, but ${ctx.names.stream} was made ${stream}: ` +
          'the stream was deleted and made again, and may hold only part of the run'
        : head.events > scan.count
          ? `its head in the store records ${head.events} events but the stream holds ${scan.count}`
          : scan.events[head.events - 1]!.hash !== head.hash
            ? `event ${head.events - 1} differs from the one its head in the store records`
            : undefined;
  if (bad) throw new EventLogCorruptError(where, { line: scan.count, reason: bad }, runId);
  return { jsonl, events: scan.events, lastStreamSeq };
}

/**
 * A run from the store put into a local state directory: its log (only when the local copy, if
 * any, is a prefix of it: a copy that went its own way is refused), its files, and its head, so
 * RunLog.open and every command read it as a local run.
 */
export async function materializeRun(
  ctx: StoreContext,
  stateDir: string,
  runId: string,
): Promise<{ events: number; lastStreamSeq: number; files: number }> {
  const run = await readStoredRun(ctx, runId);
  const dir = runDirOf(stateDir, runId);
  const file = path.join(dir, EVENTS_FILE);
  mkdirSync(dir, { recursive: true });
  // A live writer of the local copy (RunLockedError) is never written under: it holds the file open.
  const unlock = acquireWriterLock(dir, runId);
  let files: number;
  try {
    const local = existsSync(file) ? readFileSync(file) : undefined;
    if (local && (local.length > run.jsonl.length || !run.jsonl.subarray(0, local.length).equals(local)))
      throw new EventLogCorruptError(
        file,
        { line: 1, reason: `the local copy of run ${runId} differs from the store's (${ctx.url}); move it away first` },
        runId,
      );
    files = await downloadRunFiles(ctx.files, runId, dir);
    // Only what the local copy lacks is added, at its end: the file is never replaced under a reader.
    if (!local || local.length < run.jsonl.length) {
      const fd = openSync(file, 'a', 0o600);
      try {
        writeSync(fd, run.jsonl.subarray(local?.length ?? 0));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  } finally {
    unlock();
  }
  const last = run.events.at(-1)!;
  writeHead(ctx.key, {
    runId,
    firstHash: run.events[0]!.hash,
    events: run.events.length,
    hash: last.hash,
    completedSeq: run.events.findLast((e) => e.type === 'run.completed')?.seq ?? null,
    keyId: ctx.key.id,
    updated: new Date().toISOString(),
  });
  return { events: run.events.length, lastStreamSeq: run.lastStreamSeq, files };
}
