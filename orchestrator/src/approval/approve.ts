import { usableGrant } from './state';
import type { AskCall } from '../tools/pipeline/decide';
import type { PipelineDeps } from '../tools/pipeline/types';
import { askApprover, type Approved } from './ask-approver';
import { requestApproval } from './request-approval';

/**
 * Phase 3, approve, for a call the policy asks about: a person's standing grant for exactly this
 * action ("approve for this run") clears it at once; otherwise the request is recorded and put to
 * the channel, whose answer clears it, declines it, or leaves it pending.
 */
export async function approve(
  deps: PipelineDeps,
  call: { callId: string; tool: string; input: unknown },
  asked: AskCall,
  signal?: AbortSignal,
): Promise<Approved> {
  const standing = usableGrant(deps.tracker.state.approvals, asked.actionHash);
  if (standing) {
    return { kind: 'ready', grant: { eventId: standing.eventId, executionHash: asked.executionHash, by: 'user' } };
  }
  const request = requestApproval(deps, {
    callId: call.callId,
    tool: call.tool,
    input: call.input,
    actionHash: asked.actionHash,
    executionHash: asked.executionHash,
    decision: asked.decision,
    causationId: asked.approvalId,
  });
  return askApprover(deps, request, call.input, signal);
}
