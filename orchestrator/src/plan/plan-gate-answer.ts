import { newId, type EventDataOf, type PlanTask } from '@gatehouse/shared';
import type { CallResult, ToolCall } from '../tools/pipeline';
import { runToolsOf } from '../tools/builtin/plan-tool-names';
import { applyPlanChanges } from './apply-changes';
import { planSummary, planTally } from './plan-end';
import { eventById, type PlanDriverDeps } from './plan-driver-deps';
import { validatePlan } from './validate-plan';

type Gate = EventDataOf<'plan.gate'>;

/**
 * After a submit_plan call left the pipeline: the plan is on record (`plan.created`, once it passed
 * validation), the gate's request too (`plan.gate requested`), and once the call is answered the
 * gate's decision, read from the log: a person's grant (with any changes, applied and validated
 * again), a policy rule's allow, a denial (a rejection with its reason, or a question).
 * A call refused at validation is only its observation: the model revises the plan.
 */
export function recordPlanGate(d: PlanDriverDeps, call: ToolCall, result: CallResult): void {
  const st = d.tracker.state;
  const known = st.approvals.calls[call.callId];
  if (known?.validated === undefined) return;
  if (st.plan.callId !== call.callId) {
    const checked = validatePlan(known.validated, { tools: runToolsOf(st.surface) });
    if (!checked.ok) return;
    // A new plan during execution ends the one being executed, on record with how far it got.
    if (st.plan.phase === 'executing' && st.plan.planId)
      d.log.append('plan.completed', 'runtime', {
        planId: st.plan.planId,
        ...planTally(st.plan),
        summary:
          `Replaced by a new plan (v${st.plan.version + 1})` +
          `${st.plan.current ? ` while ${st.plan.current} was in progress` : ''}. ${planSummary(st.plan)}`,
      });
    d.log.append('plan.created', 'runtime', {
      planId: newId('plan'),
      callId: call.callId,
      version: st.plan.version + 1,
      tasks: checked.tasks,
      dependencies: checked.tasks.flatMap((t) => t.dependsOn.map((dep): [string, string] => [t.id, dep])),
    });
  }
  const plan = d.tracker.state.plan;
  const planId = plan.planId!;
  if (known.requestId && !plan.requested)
    d.log.append('plan.gate', 'runtime', { planId, status: 'requested', requestId: known.requestId });
  if (result.kind !== 'observed' || plan.phase !== 'gate' || plan.callId !== call.callId) return;
  const decided = gateDecision(d, call.callId, result.observation.outcome, plan.proposed);
  if (decided) d.log.append('plan.gate', 'runtime', { planId, ...decided });
}

function gateDecision(
  d: PlanDriverDeps,
  callId: string,
  outcome: string,
  proposed: PlanTask[],
): Omit<Gate, 'planId'> | undefined {
  const st = d.tracker.state;
  const call = st.approvals.calls[callId]!;
  const events = d.log.events();
  const request = call.requestId ? st.approvals.requests[call.requestId] : undefined;
  const requestId = request ? { requestId: request.requestId } : {};
  const answer = eventById(events, request?.answer?.eventId);
  const policy = eventById(events, call.decision?.eventId);
  const byPolicy = policy?.type === 'tool.approval' ? `policy:${policy.data.policyId}` : 'policy';
  if (outcome === 'ok') {
    if (!answer) return { status: 'approved', by: byPolicy, tasks: proposed };
    const by = request?.answer?.approver ?? 'unknown';
    const changes = answer.type === 'approval.granted' ? answer.data.changes : undefined;
    if (!changes) return { status: 'approved', ...requestId, by, tasks: proposed };
    const changed = applyPlanChanges(proposed, changes);
    if (!changed.ok)
      return { status: 'rejected', ...requestId, by, changes, reason: `the changes were refused: ${changed.problem}` };
    return { status: 'modified', ...requestId, by, changes, tasks: changed.tasks };
  }
  if (outcome !== 'denied') return undefined;
  if (answer?.type === 'approval.denied') {
    const status = answer.data.clarify ? 'clarification' : 'rejected';
    return { status, ...requestId, by: answer.data.approver, reason: answer.data.reason.slice(0, 4000) };
  }
  return {
    status: 'rejected',
    ...requestId,
    by: request?.answer?.approver ?? byPolicy,
    reason: (policy?.type === 'tool.approval' ? policy.data.reason : 'denied').slice(0, 4000),
  };
}
