import { stateDirForRun } from '../events/state-home';
import { buildReport } from '../report/build-report';
import type { RunReport } from '../report/report-schema';
import type { EvalTaskResult } from './eval-report';
import type { SpawnedRun } from './spawn-run';
import type { EvalTask } from './suite-schema';

const NOTHING = {
  stopReason: null,
  decidedBy: null,
  check: null,
  turns: 0,
  toolCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  costUsd: null,
} as const;

/**
 * A task's result, from its run's log through the same report `gatehouse report` builds: the log
 * is the record, not what the process printed. Passed means final with the check passed (a run
 * with a check ends final only then; both are asked so a change there cannot pass a task quietly).
 */
export function taskResult(t: EvalTask, run: SpawnedRun, o: { stateDir?: string } = {}): EvalTaskResult {
  const base = { id: t.id, model: t.model, wallMs: run.wallMs, exitCode: run.exitCode };
  if (run.runId === null) return notStarted(run, base);
  let report: RunReport;
  try {
    report = buildReport(stateDirForRun(t.repository, { flag: o.stateDir }), run.runId, { verify: false });
  } catch (e) {
    return { ...base, ...NOTHING, passed: false, reason: 'error', status: 'error', runId: run.runId, error: String(e) };
  }
  const status = report.outcome.status;
  const passed = status === 'final' && report.check.result === 'passed';
  return {
    ...base,
    passed,
    reason: passed ? null : status === 'paused' ? 'paused' : (report.outcome.stopReason ?? status),
    status,
    stopReason: report.outcome.stopReason,
    decidedBy: report.outcome.decidedBy,
    check: report.check.result,
    turns: report.run.turns,
    toolCalls: report.run.toolCalls,
    inputTokens: report.usage.inputTokens,
    outputTokens: report.usage.outputTokens,
    cachedInputTokens: report.usage.cachedInputTokens ?? 0,
    costUsd: report.usage.costUsd,
    runId: run.runId,
    error: null,
  };
}

/** A task eval never started (it was cancelled first). */
export function notRun(t: EvalTask): EvalTaskResult {
  return {
    id: t.id,
    model: t.model,
    ...NOTHING,
    passed: false,
    reason: 'cancelled',
    status: 'not_run',
    wallMs: 0,
    exitCode: null,
    runId: null,
    error: null,
  };
}

function notStarted(
  run: SpawnedRun,
  base: Pick<EvalTaskResult, 'id' | 'model' | 'wallMs' | 'exitCode'>,
): EvalTaskResult {
  const said = run.stderrTail.trim();
  const how = run.signal ? `ended by ${run.signal}` : `exit ${String(run.exitCode)}`;
  return {
    ...base,
    ...NOTHING,
    passed: false,
    reason: 'error',
    status: 'error',
    runId: null,
    error: said ? `${said} (${how})` : `gatehouse run started no run (${how})`,
  };
}
