import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import path from 'node:path';
import { Id } from '@gatehouse/shared';
import { EVENTS_FILE, runsDir } from './paths';

export interface RunSummary {
  runId: string;
  /** ts of the first event; null while the log is empty or unreadable. */
  startedAt: string | null;
  parentRunId: string | null;
  lastType: string | null;
  lastTs: string | null;
  /** run.completed's data.status; `paused` after run.paused; null while the run is in progress (or was cut short). */
  status: string | null;
}

const CHUNK = 64 * 1024;

/** The first complete line of a file, reading only as much as needed. */
function firstLine(fd: number, size: number): string | null {
  const parts: Buffer[] = [];
  for (let pos = 0; pos < size;) {
    const buf = Buffer.alloc(Math.min(CHUNK, size - pos));
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl !== -1) {
      parts.push(buf.subarray(0, nl));
      return Buffer.concat(parts).toString('utf8');
    }
    parts.push(buf.subarray(0, n));
    pos += n;
  }
  return null;
}

/** The last complete (newline-terminated) line, reading backwards from the end; a torn tail is skipped. */
function lastLine(fd: number, size: number): string | null {
  let tail = Buffer.alloc(0);
  for (let pos = size; pos > 0;) {
    const len = Math.min(CHUNK, pos);
    pos -= len;
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, pos);
    tail = Buffer.concat([buf, tail]);
    const end = tail.lastIndexOf(0x0a);
    if (end === -1) continue;
    const start = end > 0 ? tail.lastIndexOf(0x0a, end - 1) : -1;
    if (start !== -1) return tail.subarray(start + 1, end).toString('utf8');
    if (pos === 0) return tail.subarray(0, end).toString('utf8');
  }
  return null;
}

function parse(line: string | null): Record<string, unknown> | null {
  if (line === null) return null;
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The runs under a state directory, oldest first, from each log's first and last lines only (no
 * verification: that is `gatehouse verify`). Directories that are not runs are skipped.
 */
export function listRuns(stateDir: string): RunSummary[] {
  const dir = runsDir(stateDir);
  if (!existsSync(dir)) return [];
  const out: RunSummary[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !Id.safeParse(entry.name).success) continue;
    const file = path.join(dir, entry.name, EVENTS_FILE);
    if (!existsSync(file)) continue;
    const fd = openSync(file, 'r');
    let first: Record<string, unknown> | null;
    let last: Record<string, unknown> | null;
    try {
      const size = fstatSync(fd).size;
      first = parse(firstLine(fd, size));
      last = parse(lastLine(fd, size));
    } finally {
      closeSync(fd);
    }
    const type = str(last?.type);
    const data = last?.data as Record<string, unknown> | undefined;
    out.push({
      runId: entry.name,
      startedAt: str(first?.ts),
      parentRunId: str(first?.parentRunId),
      lastType: type,
      lastTs: str(last?.ts),
      status: type === 'run.completed' ? str(data?.status) : type === 'run.paused' ? 'paused' : null,
    });
  }
  return out.sort(
    (a, b) => (a.startedAt ?? '\uffff').localeCompare(b.startedAt ?? '\uffff') || a.runId.localeCompare(b.runId),
  );
}
