import { isUtf8 } from 'node:buffer';
import { EventData, EventEnvelope, GENESIS_HASH } from '@gatehouse/shared';
import type { z } from 'zod';
import { sealEvent } from './hash';
import { EVENT_MAC, type LogKey } from './key';
import { newerSchemaReason } from './schema-version';

/**
 * Reading a log back: the one place that decides whether a line is a trustworthy event. Both
 * `verifyLog` and `RunLog.open` use it, so what the verifier accepts is exactly what the store
 * will append to.
 */

export interface BadEvent {
  /** 1-based line number in events.jsonl. */
  line: number;
  seq?: number;
  id?: string;
  reason: string;
}

/** What is wrong with the first bad line, coarsely: the store treats `torn` differently. */
export type BadKind =
  /** The last line is incomplete: no newline at the end of the file, or not JSON at all. */
  | 'torn'
  /** A line that is not JSON, in the middle of the file. */
  | 'garbled'
  /** Parses, but is not a sound event: schema, canonical form, sequence, chain or hash. */
  | 'invalid'
  /** Written in a newer schemaVersion than this gatehouse reads: not checked, neither good nor bad. */
  | 'newer';

export interface ScanResult {
  /** The good events, in order (empty unless `keepEvents`). */
  events: EventEnvelope[];
  /** How many events are good (before the first bad line). */
  count: number;
  /** Hash of the last good event (GENESIS_HASH when there is none). */
  lastHash: string;
  /** Byte offset just after the last good line: where a torn tail is cut off. */
  goodBytes: number;
  totalBytes: number;
  firstBad?: BadEvent & { kind: BadKind };
  /** What the keyed MACs of the good events showed. */
  macs: MacTally;
}

export interface MacTally {
  /** Events whose MAC verified with the given key. */
  verified: number;
  /** Events in the old format (schemaVersion 1): no MAC to check. */
  unkeyed: number;
  /** Events with a MAC made by another installation's key, by key id: not checkable here. */
  foreign: Record<string, number>;
  /** Events with a MAC that was not checked because no key was given. */
  unchecked: number;
  /** The first event whose MAC is another installation's. */
  firstForeign?: BadEvent;
}

const NEWLINE = 0x0a;

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

export interface ScanOptions {
  /** The run the file must belong to (its directory name); default: the first event's runId. */
  runId?: string;
  /** Return the events (the store needs them; the verifier only counts, and keeps memory flat). */
  keepEvents?: boolean;
  /** Check each event's MAC with this key (a MAC that does not verify is a bad event). */
  key?: LogKey;
}

/** Check a whole log, stopping at the first bad line. */
export function scanLog(buf: Buffer, opts: ScanOptions = {}): ScanResult {
  const events: EventEnvelope[] = [];
  const keep = opts.keepEvents ?? false;
  let count = 0;
  let pos = 0;
  let lineNo = 0;
  let prevHash = GENESIS_HASH;
  let runId = opts.runId;
  let parentRunId: string | null | undefined;
  let keyed = false;
  const key = opts.key;
  const macs: MacTally = { verified: 0, unkeyed: 0, foreign: {}, unchecked: 0 };
  const total = buf.length;
  // One closure for the whole scan (it reads lineNo and pos as they are when it is called).
  const fail = (kind: BadKind, reason: string, e?: { seq?: unknown; id?: unknown }): ScanResult => {
    const bad: BadEvent & { kind: BadKind } = { line: lineNo, reason, kind };
    if (typeof e?.seq === 'number') bad.seq = e.seq;
    if (typeof e?.id === 'string') bad.id = e.id;
    return { events, count, lastHash: prevHash, goodBytes: pos, totalBytes: total, firstBad: bad, macs };
  };

  while (pos < total) {
    lineNo++;
    const nl = buf.indexOf(NEWLINE, pos);
    const end = nl === -1 ? total : nl;
    const isLast = nl === -1 || nl === total - 1;

    if (nl === -1)
      return fail(
        'torn',
        `torn last line (${end - pos} bytes without a final newline): the last write did not complete`,
      );
    const bytes = buf.subarray(pos, end);
    if (!isUtf8(bytes))
      return fail(
        isLast ? 'torn' : 'garbled',
        `line is not valid UTF-8${isLast ? ' (torn write?)' : ': the file was corrupted or edited'}`,
      );
    const text = bytes.toString('utf8');
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return fail(
        isLast ? 'torn' : 'garbled',
        isLast
          ? `torn last line (${end - pos + 1} bytes, not JSON): the last write did not complete`
          : 'line is not valid JSON: the file was corrupted or edited',
      );
    }
    const loose = (typeof raw === 'object' && raw !== null ? raw : {}) as { seq?: unknown; id?: unknown };
    const newer = newerSchemaReason(raw);
    if (newer !== undefined) return fail('newer', newer, loose);
    const parsed = EventEnvelope.safeParse(raw);
    if (!parsed.success) return fail('invalid', `not a valid event envelope (${describeIssues(parsed.error)})`, loose);
    const e = parsed.data;
    if (e.data === undefined) return fail('invalid', 'not a valid event envelope (data: missing)', e);

    const expectedSeq = count;
    if (e.seq !== expectedSeq) {
      const why =
        e.seq > expectedSeq
          ? `${e.seq - expectedSeq === 1 ? `event ${expectedSeq} is` : `events ${expectedSeq}..${e.seq - 1} are`} ` +
            `missing: removed or reordered`
          : `seq ${e.seq} was already used: an event was duplicated or reordered`;
      return fail('invalid', `seq is ${e.seq}, expected ${expectedSeq}: ${why}`, e);
    }
    runId ??= e.runId;
    if (e.runId !== runId)
      return fail('invalid', `runId is ${e.runId}, expected ${runId}: the event belongs to another run`, e);
    if (parentRunId === undefined) parentRunId = e.parentRunId;
    else if (e.parentRunId !== parentRunId)
      return fail(
        'invalid',
        `parentRunId is ${String(e.parentRunId)}, expected ${String(parentRunId)}: events of another run were ` +
          `spliced in`,
        e,
      );
    if (e.prevHash !== prevHash) {
      return fail(
        'invalid',
        expectedSeq === 0
          ? 'prevHash of the first event is not the genesis hash: events before it were removed'
          : `prevHash does not match event ${expectedSeq - 1}: an event was removed or reordered`,
        e,
      );
    }
    if (e.schemaVersion === undefined && (keyed || e.mac !== undefined)) {
      const why = keyed
        ? 'event is in the old format (no schemaVersion, no MAC) after keyed events: its MAC was stripped'
        : 'an old-format event (no schemaVersion) carries a MAC';
      return fail('invalid', why, e);
    }
    if (e.schemaVersion !== undefined && (e.mac === undefined || !EVENT_MAC.test(e.mac))) {
      const what = e.mac === undefined ? 'no' : 'a malformed';
      return fail(
        'invalid',
        `${what} MAC on an event of schemaVersion ${e.schemaVersion}: it was stripped or edited`,
        e,
      );
    }
    let sealed: { hash: string; line: string };
    try {
      sealed = sealEvent(e, e.mac);
    } catch (err) {
      return fail('invalid', `event cannot be encoded: ${(err as Error).message}`, e);
    }
    if (sealed.hash !== e.hash) return fail('invalid', 'hash mismatch: the event was modified after it was written', e);
    if (sealed.line !== text)
      return fail(
        'invalid',
        'line is not in canonical form: it was re-written after it was sealed (the content hashes the same)',
        e,
      );
    if (e.mac === undefined) macs.unkeyed++;
    else if (!key) macs.unchecked++;
    else {
      const mac = key.checkEventMac(e.hash, e.mac);
      if (mac === 'bad') {
        const why =
          "keyed MAC does not verify with this installation's key: the event was modified and the chain recomputed";
        return fail('invalid', `${why} (only the key can make a MAC)`, e);
      }
      if (mac === 'ok') macs.verified++;
      else {
        const id = e.mac.slice(0, 16);
        macs.foreign[id] = (macs.foreign[id] ?? 0) + 1;
        macs.firstForeign ??= {
          line: lineNo,
          seq: e.seq,
          id: e.id,
          reason:
            `MAC made with another installation's key (id ${id}, this one's is ${key.id}): it cannot be ` +
            `checked here`,
        };
      }
    }
    keyed ||= e.mac !== undefined;
    if (!Object.hasOwn(EventData, e.type)) return fail('invalid', `unknown event type ${JSON.stringify(e.type)}`, e);
    const schema = EventData[e.type as keyof typeof EventData] as z.ZodType;
    const data = schema.safeParse(e.data);
    if (!data.success)
      return fail('invalid', `data does not match the schema of ${e.type} (${describeIssues(data.error)})`, e);

    // Its data was just checked against its type's schema: from here it is a typed event.
    if (keep) events.push(e as EventEnvelope);
    count++;
    prevHash = e.hash;
    pos = nl + 1;
  }
  return { events, count, lastHash: prevHash, goodBytes: pos, totalBytes: total, macs };
}
