import type { EventEnvelope } from '@gatehouse/shared';
import { isCheckCommand } from './check-command';

/** Gatehouse's own runs of the check have call ids `check_1`, `check_2`, … (models never get ids that start so). */
export const CHECK_CALL_PREFIX = 'check_';

/** One run of the check command as the log shows it. */
export interface CheckRun {
  callId: string;
  ranBy: 'model' | 'gatehouse';
  /** The call's observation, once it has one. */
  observationId?: string;
  observationOutcome?: string;
  /** What the model was shown (framed), for the excerpt sent back on a failure. */
  content?: string;
  /** Whether it was executed at all (a denied, declined or rejected call was not). */
  executed: boolean;
  /** The execution's status (`ok`, `failed`, `timeout`, `lost`, …) when it was executed. */
  status?: string;
  exitCode: number | null;
  /** The input as validated (its hash heads the excerpt's frame). */
  input?: unknown;
}

interface CallSeen {
  tool?: string;
  actor?: string;
  command?: unknown;
  input?: unknown;
}

/**
 * Whether a completed execution changed the workspace: it says it changed files, or it was lost
 * (interrupted, its effects unknown). A command's changes are what the sandbox's snapshot saw
 * (docs/runs.md, "The check").
 */
function changedWorkspace(d: { status: string; filesChanged: readonly string[] }): boolean {
  return d.filesChanged.length > 0 || d.status === 'lost';
}

/**
 * The last run of `check` that completed after the last change to the workspace, if there is one:
 * a `bash` call whose validated command is the check command (check-command.ts). Its own changes
 * (a test run writing a cache) do not count against it; any later change does. Only executions
 * count here: a call that was denied or rejected never ran.
 */
export function checkRunAfterLastChange(events: readonly EventEnvelope[], check: string): CheckRun | undefined {
  const calls = new Map<string, CallSeen>();
  let candidate: CheckRun | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'tool.intent':
        calls.set(e.data.callId, { tool: e.data.tool, actor: e.actor });
        break;
      case 'tool.validation': {
        const seen = calls.get(e.data.callId);
        if (seen && e.data.ok) {
          seen.input = e.data.input;
          seen.command = (e.data.input as { command?: unknown } | undefined)?.command;
        }
        break;
      }
      case 'tool.execution.completed': {
        const d = e.data;
        const seen = calls.get(d.callId);
        if (
          seen?.tool === 'bash' &&
          isCheckCommand(seen.command, check) &&
          d.status !== 'lost' &&
          d.status !== 'rejected'
        )
          candidate = {
            callId: d.callId,
            ranBy: ranBy(d.callId, seen.actor),
            executed: true,
            status: d.status,
            exitCode: d.exitCode,
            input: seen.input,
          };
        else if (d.status !== 'rejected' && changedWorkspace(d)) candidate = undefined;
        break;
      }
      case 'tool.observation':
        if (candidate && e.data.callId === candidate.callId) {
          candidate.observationId = e.data.observationId;
          candidate.observationOutcome = e.data.outcome;
          candidate.content = e.data.content;
        }
        break;
      default:
        break;
    }
  }
  return candidate;
}

/** One call as a run of the check: how far it got, and what it ended in. */
export function checkRunOf(events: readonly EventEnvelope[], callId: string): CheckRun {
  const run: CheckRun = { callId, ranBy: 'gatehouse', executed: false, exitCode: null };
  for (const e of events) {
    if (e.type === 'tool.intent' && e.data.callId === callId) run.ranBy = ranBy(callId, e.actor);
    else if (e.type === 'tool.validation' && e.data.callId === callId && e.data.ok) run.input = e.data.input;
    else if (e.type === 'tool.execution.completed' && e.data.callId === callId) {
      run.executed = e.data.status !== 'rejected';
      run.status = e.data.status;
      run.exitCode = e.data.exitCode;
    } else if (e.type === 'tool.observation' && e.data.callId === callId) {
      run.observationId = e.data.observationId;
      run.observationOutcome = e.data.outcome;
      run.content = e.data.content;
    }
  }
  return run;
}

/** Whether a run of the check passed: it ran to an exit, and the exit code was 0. */
export function checkPassed(run: CheckRun): boolean {
  return run.executed && run.status === 'ok' && run.exitCode === 0;
}

/**
 * Gatehouse's run of the check that a stopped run left without a verdict (it waited for approval,
 * or gatehouse stopped while it ran): the newest `check_N` call with no `run.check` naming it.
 */
export function openGatehouseCheck(events: readonly EventEnvelope[]): string | undefined {
  let open: string | undefined;
  for (const e of events) {
    if (e.type === 'tool.intent' && e.actor === 'runtime' && e.data.callId.startsWith(CHECK_CALL_PREFIX))
      open = e.data.callId;
    else if (e.type === 'run.check' && e.data.callId === open) open = undefined;
  }
  return open;
}

/** The id of gatehouse's next run of the check: `check_N`, unused in this run. */
export function nextCheckCallId(events: readonly EventEnvelope[]): string {
  const used = new Set<string>();
  for (const e of events) if (e.type === 'tool.intent') used.add(e.data.callId);
  let n = 1;
  while (used.has(`${CHECK_CALL_PREFIX}${n}`)) n++;
  return `${CHECK_CALL_PREFIX}${n}`;
}

/** How many times the check failed (or could not run) when the model answered, before now. */
export function checkFailures(events: readonly EventEnvelope[]): number {
  return events.filter((e) => e.type === 'run.check' && !e.data.passed).length;
}

function ranBy(callId: string, actor: string | undefined): 'model' | 'gatehouse' {
  return actor === 'runtime' && callId.startsWith(CHECK_CALL_PREFIX) ? 'gatehouse' : 'model';
}
