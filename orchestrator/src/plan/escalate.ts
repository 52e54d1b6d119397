import { actionHash, RecoveryChoice } from '@gatehouse/shared';
import { previewOf } from '../approval/channels/preview';
import type { ApprovalAnswer, ApprovalPrompt } from '../approval/channels/types';
import { requestApproval } from '../approval/request-approval';
import { record } from '../tools/pipeline/record';
import { decidedEscalation } from './decided-escalation';
import { escalationText, type EscalationCause } from './escalation-text';
import type { RecoveryStep, TaskFailure } from './plan-types';
import type { RecoveryDeps } from './recovery-deps';

/** Without a channel nobody can answer, and a run must never hang on it: an unanswerable escalation stops the plan. */
const NO_APPROVER: ApprovalAnswer = {
  decision: 'deny',
  approver: 'runtime:no-approver',
  channel: 'headless',
  reason: 'no approver is available in this run',
};

/**
 * Puts a failure recovery cannot settle to a person: an approval request (tool `escalation`, no
 * tool.intent) and `recovery.escalated` requested, both durable before anyone is asked; then the
 * channel's answer is recorded like any approval answer and turned into the step. A `pause` leaves
 * the request open on record (`gatehouse plan decide` answers it; the resumed driver calls
 * decidedEscalation).
 */
export async function escalate(
  deps: RecoveryDeps,
  failure: TaskFailure,
  cause: EscalationCause,
  /** The failure.classified event this escalation follows from. */
  causationId: string,
  signal: AbortSignal,
): Promise<RecoveryStep> {
  const { task, planId } = failure;
  const callPrefix = `esc_${task.id}_`;
  const earlier = Object.values(deps.tracker.state.approvals.requests).filter(
    (r) => r.tool === 'escalation' && r.callId.startsWith(callPrefix),
  ).length;
  const reason = escalationText(cause);
  const input = {
    taskId: task.id,
    title: task.title,
    failureClass: cause.cls,
    reason,
    choices: [...RecoveryChoice.options],
  };
  const hash = actionHash({ name: 'escalation', input });
  const request = requestApproval(deps, {
    callId: `${callPrefix}${earlier + 1}`,
    tool: 'escalation',
    input,
    actionHash: hash,
    executionHash: hash,
    decision: { policyId: 'plan:escalation', reason, risk: [cause.cls], shape: 'escalation' },
    causationId,
  });
  record(
    deps,
    'recovery.escalated',
    'runtime',
    { planId, taskId: task.id, class: cause.cls, reason, status: 'requested', requestId: request.requestId },
    request.eventId,
  );
  deps.log.sync();

  const prompt: ApprovalPrompt = {
    runId: deps.tracker.state.runId ?? 'unknown',
    requestId: request.requestId,
    tool: 'escalation',
    input,
    actionHash: hash,
    rule: request.rule,
    reason,
    risk: request.risk,
    preview: previewOf('escalation', input),
    lineage: request.lineage,
  };
  const answer = deps.channel ? await deps.channel.ask(prompt, signal) : NO_APPROVER;
  if (answer.decision === 'pause') return { kind: 'pending', requestId: request.requestId };
  if (answer.decision === 'deny') {
    record(
      deps,
      'approval.denied',
      'user',
      {
        requestId: request.requestId,
        callId: request.callId,
        actionHash: hash,
        approver: answer.approver,
        channel: answer.channel,
        reason: answer.reason,
      },
      request.eventId,
    );
  } else {
    // The channel says which of the three; a plain grant from a channel that offers no choice is "go on".
    const choice = RecoveryChoice.safeParse((answer as { choice?: unknown }).choice);
    record(
      deps,
      'approval.granted',
      'user',
      {
        requestId: request.requestId,
        callId: request.callId,
        actionHash: hash,
        executionHash: hash,
        // Always once: a choice answers this escalation only, never stands for later ones.
        scope: 'once',
        approver: answer.approver,
        channel: answer.channel,
        reason: answer.reason ?? '',
        choice: choice.success ? choice.data : 'retry',
      },
      request.eventId,
    );
  }
  deps.log.sync();
  const step = decidedEscalation(request.requestId, deps);
  if (!step) throw new Error(`escalation ${request.requestId} was answered but its answer is not on record`);
  return step;
}
