import { bodyOf } from '../loop/check-excerpt';
import { checkFinalAnswer } from '../loop/contract';
import type { LoopOutcome } from '../loop/loop';
import type { ToolCall } from '../tools/pipeline';
import { recoverFailure } from './plan-failures';
import { pausedOn, type PlanDriverDeps } from './plan-driver-deps';
import { currentTask } from './plan-state';
import { settleRetry } from './settle-retry';

/**
 * After complete_task for the current task was observed: its summary is checked like a final
 * answer (every claim cites an observation that supports it), then gatehouse runs the task's check
 * through the pipeline as its own call (`check_<complete_task call>`), and only then is the task
 * `task.completed`. A refused summary or a failing check is a task failure, for recovery.
 */
export async function endTask(
  d: PlanDriverDeps,
  call: ToolCall,
  signal: AbortSignal,
): Promise<LoopOutcome | undefined> {
  const cur = currentTask(d.tracker.state.plan);
  const input = call.input as { taskId?: unknown; summary?: unknown };
  if (!cur || input.taskId !== cur.task.id || typeof input.summary !== 'string') return undefined;
  const { task, index, total } = cur;
  const summary = input.summary;
  const verdict = checkFinalAnswer(summary, d.log.events());
  if (!verdict.ok) return recoverFailure(d, { kind: 'summary', reason: verdict.reason }, signal);
  let check: { command: string; exitCode: number | null; callId: string } | undefined;
  if (task.check) {
    const callId = `check_${call.callId}`.slice(0, 128);
    const known = d.tracker.state.approvals.calls[callId];
    const result = known
      ? await d.pipeline.continueCall(callId, signal)
      : await d.pipeline.run(
          {
            callId,
            turn: call.turn,
            tool: 'bash',
            input: {
              command: task.check,
              description: `the check of task ${task.id}, run by gatehouse`,
              timeout: d.checkTimeoutMs,
            },
            actor: 'runtime',
            taskId: task.id,
          },
          signal,
        );
    if (signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
    if (result?.kind === 'pending') return pausedOn(result.requestId);
    const ran = d.tracker.state.approvals.calls[callId]?.result;
    const exitCode = ran?.exitCode ?? null;
    if (!ran || ran.status !== 'ok' || exitCode !== 0) {
      // The command's output, not the observation's frame around it: it is quoted to a person as evidence.
      const output = result?.kind === 'observed' ? bodyOf(result.observation.content) : '';
      return recoverFailure(
        d,
        {
          kind: 'check',
          command: task.check,
          exitCode,
          ...(ran ? { status: ran.status } : { status: 'not_run' }),
          output: output.slice(-4000),
        },
        signal,
      );
    }
    check = { command: task.check, exitCode, callId };
  }
  const evidence = [...new Set(verdict.claims.flatMap((c) => c.cites))].slice(0, 100);
  const planId = d.tracker.state.plan.planId!;
  // A retry the model made after a failure of this task worked: recovery's outcome, then the task's.
  settleRetry(d.recovery, planId, task.id, 'succeeded');
  d.log.append('task.completed', 'runtime', {
    planId,
    taskId: task.id,
    title: task.title,
    index,
    total,
    result: summary.slice(0, 4000),
    callId: call.callId,
    ...(evidence.length ? { evidence } : {}),
    ...(check ? { check } : {}),
  });
  return undefined;
}
