import { actionHash } from '@gatehouse/shared';
import type { Decision } from '../../policy/approval-policy';
import { boundInput, decideCall, type PathDecision } from '../path-decision';
import type { Tool } from '../tool';
import type { ResolvedRef } from '../workspace-paths';
import { planCall, type PlannedCall } from './plan-call';
import { record } from './record';
import { recordObservation } from './record-observation';
import type { Grant, PipelineDeps, Observation } from './types';
import type { ValidCall } from './validate';

/** A call the policy lets run as it is. */
export interface AllowedCall extends PlannedCall {
  kind: 'ready';
  grant: Grant;
}

/** A call the policy puts to a person: what they would approve, and the `tool.approval` that asked. */
export interface AskCall extends PlannedCall {
  kind: 'ask';
  /** The hash an approval of this call is bound to (tool, input and where its paths led). */
  actionHash: string;
  decision: Decision;
  approvalId: string;
}

export type Decided = AllowedCall | AskCall | { kind: 'denied'; observation: Observation };

/**
 * Phase 2, decide: the call is planned first, so the approval records the hash of exactly what
 * will run (that recorded hash is what the daemon checks); then the policy decides on the call
 * as requested and on where its paths lead, and one `tool.approval` records the decision. A deny
 * ends the call here.
 */
export function decide(deps: PipelineDeps, call: ValidCall): Decided {
  const { tool, input, resolved } = call;
  const { plan, executionHash } = planCall(tool, input, call.ctx);
  const actionH = actionHash({ name: tool.name, input: boundInput(input, resolved) });
  const { decision, resolvedFrom } = policyDecision(deps, tool, input, resolved);
  const approval = record(
    deps,
    'tool.approval',
    'policy',
    {
      callId: call.callId,
      decision: decision.decision,
      policyId: decision.policyId,
      reason: decision.reason,
      actionHash: actionH,
      executionHash,
      risk: decision.risk,
      ...(resolvedFrom ? { resolvedFrom } : {}),
    },
    call.validationId,
  );
  if (decision.decision === 'deny') {
    const { observation } = recordObservation(deps, {
      callId: call.callId,
      tool: tool.name,
      outcome: 'denied',
      body: `denied by policy ${decision.policyId}: ${decision.reason}. It was not run; choose another action.`,
      causationId: approval.id,
      input,
    });
    return { kind: 'denied', observation };
  }
  if (decision.decision === 'allow') {
    return { kind: 'ready', plan, executionHash, grant: { eventId: approval.id, executionHash, by: 'policy' } };
  }
  return { kind: 'ask', plan, executionHash, actionHash: actionH, decision, approvalId: approval.id };
}

/** The policy on the call as requested and on where its paths lead; strictest wins (path-decision.ts). */
export function policyDecision(
  deps: PipelineDeps,
  tool: Tool<unknown>,
  input: unknown,
  resolved: readonly ResolvedRef[],
): PathDecision {
  return decideCall(deps.policy, deps.tracker.state.approvals.approvedShapes, tool, input, resolved);
}
