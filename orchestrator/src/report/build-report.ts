import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { buildTree } from '../events/lineage';
import { runDir } from '../events/paths';
import { fold, lastEvent } from '../events/state';
import { RunLog } from '../events/store';
import { exitCodeFor } from '../cli/exit-codes';
import { SETUP_FAILED } from '../run/types';
import { approvalsOf, commandsOf, observationText, refusalsOf, toolCallsByTool } from './report-calls';
import { agentsReportOf } from './report-agents';
import { REPORT_FORMAT, REPORT_VERSION, type RunReport } from './report-schema';
import { usageOf } from './report-usage';
import { planOf } from './report-plan';

export interface BuildReportOptions {
  /** Bytes of the diff file read into the report (the rest is cut and marked so). */
  diffLimit?: number;
  /** Audit every log of the tree for its `verify` verdict (default true; Markdown and eval do not show it). */
  verify?: boolean;
}

/** Enough of any diff for a person to review; the file itself stays beside the log. */
export const DEFAULT_DIFF_LIMIT = 1024 * 1024;

/**
 * The facts of a run's report, from its event log (and the diff file the log names), through the
 * same fold, approval state and agent tree that `show` and `show --tree` use. Throws what reading
 * the log throws (a missing or damaged root log); everything else missing is reported as absent.
 */
export function buildReport(stateDir: string, runId: string, o: BuildReportOptions = {}): RunReport {
  const events = RunLog.readEvents(stateDir, runId);
  const state = fold(events);
  const started = lastEvent(events, 'run.started')?.data;
  const completed = lastEvent(events, 'run.completed')?.data;
  const tree = buildTree(stateDir, runId);
  const status = tree.status;
  const finished = status !== 'running' && status !== 'paused';
  const plan = planOf(events);
  return {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    run: {
      runId,
      parentRunId: events[0]?.parentRunId ?? null,
      task: started?.task ?? '',
      model: started?.model ?? null,
      mode: started?.mode ?? null,
      repo: started?.repo ?? null,
      startedAt: events[0]?.ts ?? null,
      lastEventAt: events.at(-1)?.ts ?? null,
      turns: state.turns,
      toolCalls: state.toolCalls,
      toolCallsByTool: toolCallsByTool(events),
    },
    outcome: {
      status,
      stopReason: tree.stopReason,
      decidedBy: finished ? (completed?.decidedBy ?? null) : null,
      exitCode:
        status === 'running' ? null : exitCodeFor(tree.stopReason?.startsWith(SETUP_FAILED) ? 'setup_failed' : status),
    },
    answer: finished ? (completed?.answer ?? null) : null,
    check: checkOf(events, started),
    feedback: events
      .filter((e) => e.type === 'run.feedback')
      .map((e) => {
        const d = e.data;
        return {
          turn: d.turn,
          kind: d.kind ?? null,
          reason: d.reason,
          claims: d.claims?.map((c) => ({ ...c, reason: c.reason ?? null })) ?? null,
        };
      }),
    changes: changesOf(stateDir, runId, finished ? completed : undefined, o.diffLimit ?? DEFAULT_DIFF_LIMIT),
    commands: commandsOf(events),
    approvals: approvalsOf(events),
    refusals: refusalsOf(events, finished ? completed : undefined),
    usage: usageOf(events, finished ? completed : undefined, started),
    agents: agentsReportOf(stateDir, tree, events, o.verify ?? true),
    ...(plan ? { plan } : {}),
  };
}

function checkOf(
  events: readonly EventEnvelope[],
  started: EventDataOf<'run.started'> | undefined,
): RunReport['check'] {
  const runs = events
    .filter((e) => e.type === 'run.check')
    .map((e) => {
      const d = e.data;
      return { ...d, observationId: d.observationId ?? null, reason: d.reason ?? null };
    });
  const configured = started?.config?.environment?.check ?? null;
  const last = runs.at(-1);
  return {
    configured,
    result: last ? (last.passed ? 'passed' : 'failed') : configured !== null ? 'not_recorded' : 'none',
    runs,
    output: last?.observationId ? observationText(events, last.observationId) : null,
  };
}

function changesOf(
  stateDir: string,
  runId: string,
  completed: EventDataOf<'run.completed'> | undefined,
  diffLimit: number,
): RunReport['changes'] {
  const base = {
    files: completed ? (completed.filesChanged ?? []) : null,
    applied: completed?.applied ?? null,
    diffFile: completed?.diffFile ?? null,
  };
  if (!completed?.diffFile) return { ...base, diff: null, diffBytes: null, diffTruncated: false, diffError: null };
  const dir = runDir(stateDir, runId);
  const file = path.resolve(dir, completed.diffFile);
  // The log names the file; a name that leads out of the run's folder is not followed.
  if (path.relative(dir, file).startsWith('..') || path.isAbsolute(path.relative(dir, file)))
    return { ...base, diff: null, diffBytes: null, diffTruncated: false, diffError: 'outside the run directory' };
  try {
    const { text, bytes } = readHead(file, diffLimit);
    return { ...base, diff: text, diffBytes: bytes, diffTruncated: bytes > diffLimit, diffError: null };
  } catch (e) {
    return { ...base, diff: null, diffBytes: null, diffTruncated: false, diffError: (e as Error).message };
  }
}

/** The first `limit` bytes of a file as text (a character cut in half at the end is dropped) and its size. */
function readHead(file: string, limit: number): { text: string; bytes: number } {
  const fd = openSync(file, 'r');
  try {
    const bytes = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(bytes, limit));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return {
      text: new TextDecoder('utf-8', { fatal: false }).decode(buf.subarray(0, got)).replace(/\uFFFD$/, ''),
      bytes,
    };
  } finally {
    closeSync(fd);
  }
}
