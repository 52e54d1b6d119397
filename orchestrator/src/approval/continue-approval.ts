import { usableGrant, type CallState } from './state';
import type { Decision } from '../policy/approval-policy';
import type { PipelineDeps } from '../tools/pipeline/types';
import { askApprover, declinedByPerson, type Approved } from './ask-approver';
import { requestApproval } from './request-approval';

/**
 * Phase 3, approve, for a call a stopped run left asking (resume): it runs only with a grant on
 * record — its own request's, or a standing one for the same action. A request already declined
 * stays declined; one still open is asked again; a call stopped between the decision and its
 * request is asked now.
 */
export async function continueApproval(
  deps: PipelineDeps,
  call: CallState & { decision: NonNullable<CallState['decision']> },
  input: unknown,
  executionHash: string,
  /** The policy's decision, asked again only when a request must still be recorded. */
  decisionNow: () => Decision,
  signal?: AbortSignal,
): Promise<Approved> {
  const state = deps.tracker.state.approvals;
  const grant = usableGrant(state, call.decision.actionHash, call.requestId);
  if (grant) return { kind: 'ready', grant: { eventId: grant.eventId, executionHash, by: 'user' } };
  const request = call.requestId ? state.requests[call.requestId] : undefined;
  if (request?.status === 'denied') return declinedByPerson(deps, request, input);
  if (request) return askApprover(deps, request, input, signal);
  const asked = requestApproval(deps, {
    callId: call.callId,
    tool: call.tool,
    input,
    actionHash: call.decision.actionHash,
    executionHash,
    decision: decisionNow(),
    causationId: call.decision.eventId,
  });
  return askApprover(deps, asked, input, signal);
}
