import type { EventEnvelope } from '@gatehouse/shared';
import type { LoopOutcome } from '../loop/loop';
import type { CallResult, ToolCall } from '../tools/pipeline';
import { completePlan } from './plan-end';
import { pausedOn, type PlanDriverDeps } from './plan-driver-deps';
import { currentTask } from './plan-state';
import { decidedEscalation } from './decided-escalation';
import type { FailureInput, RecoveryStep } from './plan-types';
import { recoverTask } from './recover';
import { failureOfCall } from './failure-of-call';

/**
 * The one place a task failure goes to recovery (plan/recover.ts), and where every RecoveryStep is
 * acted on: continue (the next turn), retry the task (task.started, next attempt), skip it (recovery
 * recorded the decision), abort or fail the plan (plan.completed), or pause on a person's decision.
 */
export async function recoverFailure(
  d: PlanDriverDeps,
  failure: FailureInput,
  signal: AbortSignal,
  call?: ToolCall,
): Promise<LoopOutcome | undefined> {
  const plan = d.tracker.state.plan;
  const cur = currentTask(plan);
  if (!cur || !plan.planId) return undefined;
  const step = await recoverTask(
    {
      planId: plan.planId,
      task: cur.task,
      index: cur.index,
      total: cur.total,
      failure,
      ...(call ? { call: { callId: call.callId, tool: String(call.tool), input: call.input, turn: call.turn } } : {}),
    },
    d.recovery,
    signal,
  );
  if (signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
  return actOnStep(d, step, cur, call);
}

/** What the driver does for each RecoveryStep (recovery has put the step on record first). */
function actOnStep(
  d: PlanDriverDeps,
  step: RecoveryStep,
  cur: NonNullable<ReturnType<typeof currentTask>>,
  call?: ToolCall,
): LoopOutcome | undefined {
  const planId = d.tracker.state.plan.planId!;
  switch (step.kind) {
    case 'continue':
      return undefined;
    case 'retry_task':
      startTask(d, cur.task.id);
      return undefined;
    case 'skip':
      return afterSkip(d, cur.task.id);
    case 'abort':
      // The task failed and a person stopped the plan there: it is a failure, not a task left running.
      failTask(d, planId, cur, abortError(d, cur.task.id), call);
      return completePlan(d, true);
    case 'fail':
      failTask(d, planId, cur, step.error, call);
      return completePlan(d);
    case 'pending':
      return pausedOn(step.requestId);
  }
}

function failTask(
  d: PlanDriverDeps,
  planId: string,
  cur: NonNullable<ReturnType<typeof currentTask>>,
  error: string,
  call?: ToolCall,
): void {
  d.log.append('task.failed', 'runtime', {
    planId,
    taskId: cur.task.id,
    title: cur.task.title,
    index: cur.index,
    total: cur.total,
    error: error.slice(0, 4000),
    ...(call ? { callId: call.callId } : {}),
  });
}

/** Why an aborted task failed, from the decision on record (a denial, or no approver, also counts as abort). */
function abortError(d: PlanDriverDeps, taskId: string): string {
  const events = d.log.events();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'recovery.escalated' && e.data.taskId === taskId && e.data.status === 'decided')
      return `task ${taskId} failed (${e.data.class}) and ${e.data.by ?? 'a person'} chose abort: the plan stops.`;
  }
  return `task ${taskId} failed and the plan was aborted.`;
}

/** Records `task.started` for a task of the approved plan: its place, and its next attempt. */
export function startTask(d: PlanDriverDeps, taskId: string): void {
  const plan = d.tracker.state.plan;
  const index = plan.tasks.findIndex((t) => t.id === taskId);
  const task = plan.tasks[index]!;
  d.log.append('task.started', 'runtime', {
    planId: plan.planId!,
    taskId,
    title: task.title,
    index: index + 1,
    total: plan.tasks.length,
    attempt: (plan.attempts[taskId] ?? 0) + 1,
  });
}

/** Recovery's skip is on record (a person's decision): the plan goes on without the task. */
function afterSkip(d: PlanDriverDeps, taskId: string): LoopOutcome | undefined {
  if (d.tracker.state.plan.status[taskId] === 'skipped') return undefined;
  return {
    status: 'failed',
    stopReason: `internal_error: recovery skipped task ${taskId} without recording the decision (recovery.escalated)`,
  };
}

/**
 * On resume: an escalation the stopped run waited on (recovery.escalated requested, not decided).
 * Its answer in the log decides (retry, skip, abort; a denial is abort); unanswered, the run pauses again.
 */
export function resumeEscalation(d: PlanDriverDeps): LoopOutcome | 'none' | undefined {
  const plan = d.tracker.state.plan;
  const cur = currentTask(plan);
  if (!cur) return 'none';
  const open = openEscalation(d.log.events(), plan.planId!, cur.task.id);
  if (!open) return 'none';
  // Recovery reads the answer and records the decision once (plan/decided-escalation.ts).
  const step = decidedEscalation(open.requestId, d.recovery);
  if (!step) return pausedOn(open.requestId);
  return actOnStep(d, step, cur);
}

function openEscalation(events: readonly EventEnvelope[], planId: string, taskId: string) {
  const decided = new Set<string>();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'task.started' && e.data.planId === planId && e.data.taskId === taskId) return undefined;
    if (e.type !== 'recovery.escalated' || e.data.planId !== planId || e.data.taskId !== taskId) continue;
    if (e.data.status === 'decided' && e.data.requestId) decided.add(e.data.requestId);
    else if (e.data.status === 'requested' && e.data.requestId && !decided.has(e.data.requestId))
      return { requestId: e.data.requestId };
  }
  return undefined;
}

/**
 * Whether a call's result fails its task: not a command that merely exited non-zero (ordinary work),
 * nor a deviation (the observation tells the model), but a denial, a refused input, or a call
 * that did not run to an exit (timeout, lost sandbox, internal error).
 */
export function callFailure(d: PlanDriverDeps, call: ToolCall, result: CallResult): FailureInput | undefined {
  if (result.kind !== 'observed') return undefined;
  const o = result.observation;
  if (o.outcome === 'ok') return undefined;
  const events = d.log.events();
  const f = failureOfCall({ ...o, outcome: o.outcome }, events);
  if (f.kind !== 'call') return undefined;
  // A deviation is the model's to correct; a call cut off by a crash is reported to the model and
  // deliberately not run again (it may have had effects), so recovery must not retry it either.
  const interrupted = events.some(
    (e) =>
      e.type === 'tool.execution.completed' && e.data.callId === call.callId && e.data.error?.code === 'interrupted',
  );
  if (f.stage === 'plan' || interrupted) return undefined;
  if (o.outcome === 'failed' && (f.status === 'ok' || f.status === 'failed')) return undefined;
  return { ...f, content: f.content.slice(0, 4000) };
}
