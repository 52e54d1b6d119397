import { closeSync, existsSync, openSync, readSync, fstatSync } from 'node:fs';
import path from 'node:path';
import { runDir } from '../events/paths';
import { RunLog } from '../events/store';
import { treePending } from '../cli/approvals';

/** A request a paused run waits for, as the caller answers it with the approve tool. */
export interface PendingApproval {
  runId: string;
  requestId: string;
  tool: string;
  input: unknown;
  rule: string;
  reason: string;
}

/** Where a run stands, as the run, status and approve tools return it. */
export interface RunOutcome {
  runId: string;
  /** How it ended (`final`, `partial`, `failed`, `cancelled`), `paused`, `running`, or `unfinished` (cut short). */
  outcome: 'final' | 'partial' | 'failed' | 'cancelled' | 'paused' | 'running' | 'unfinished';
  stopReason?: string;
  decidedBy?: string;
  answer?: string;
  filesChanged: string[];
  /** The unified diff of the run's changes, cut at MAX_DIFF characters (diffFile holds the whole). */
  diff?: string;
  diffTruncated?: boolean;
  diffFile?: string;
  pending: PendingApproval[];
  runDir: string;
}

/** What a tool result carries of a diff: enough to review a change, not enough to flood the caller's context. */
export const MAX_DIFF = 100_000;

/** A run's outcome, read from its log alone (the child's exit code says less than the log). */
export function runOutcome(stateDir: string, runId: string): RunOutcome {
  const dir = runDir(stateDir, runId);
  const events = RunLog.readEvents(stateDir, runId);
  const last = events.at(-1);
  const base = { runId, filesChanged: [], pending: [], runDir: dir };
  if (last?.type === 'run.paused')
    return {
      ...base,
      outcome: 'paused',
      pending: treePending(stateDir, runId).map(({ runId: owner, request: r }) => ({
        runId: owner,
        requestId: r.requestId,
        tool: r.tool,
        input: r.input,
        rule: r.rule,
        reason: r.reason,
      })),
    };
  if (last?.type !== 'run.completed') return { ...base, outcome: 'unfinished' };
  const d = last.data;
  const diffFile = d.diffFile ? path.join(dir, d.diffFile) : undefined;
  const diff = diffFile ? readCapped(diffFile, MAX_DIFF) : undefined;
  return {
    ...base,
    outcome: d.status,
    stopReason: d.stopReason,
    ...(d.decidedBy ? { decidedBy: d.decidedBy } : {}),
    ...(d.answer !== undefined ? { answer: d.answer } : {}),
    filesChanged: d.filesChanged ?? [],
    ...(diff ? { diff: diff.text, diffTruncated: diff.truncated, diffFile } : {}),
  };
}

/** The start of a file, at most `max` characters (read as at most 4 bytes each), and whether it was cut. */
function readCapped(file: string, max: number): { text: string; truncated: boolean } | undefined {
  if (!existsSync(file)) return undefined;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, max * 4));
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    return text.length > max || size > n ? { text: text.slice(0, max), truncated: true } : { text, truncated: false };
  } finally {
    closeSync(fd);
  }
}
