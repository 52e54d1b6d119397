import { newId } from '@gatehouse/shared';
import type { RequestState } from './state';
import type { Decision } from '../policy/approval-policy';
import { jsonSafe } from '../tools/recorded-values';
import { record } from '../tools/pipeline/record';
import type { PipelineDeps } from '../tools/pipeline/types';

export interface ApprovalQuestion {
  callId: string;
  tool: string;
  input: unknown;
  actionHash: string;
  executionHash: string;
  decision: Pick<Decision, 'policyId' | 'reason' | 'risk' | 'shape'>;
  /** The `tool.approval` event that asked. */
  causationId: string;
}

/**
 * Records `approval.requested` and makes it durable before anyone is asked: a pause or a crash
 * from here on leaves the request on record, for `gatehouse approve` or a resume to answer.
 */
export function requestApproval(
  deps: Pick<PipelineDeps, 'log' | 'tracker' | 'lineage'>,
  q: ApprovalQuestion,
): RequestState {
  const requestId = newId('apr');
  const runId = deps.tracker.state.runId ?? 'unknown';
  record(
    deps,
    'approval.requested',
    'runtime',
    {
      requestId,
      callId: q.callId,
      tool: q.tool,
      input: jsonSafe(q.input),
      actionHash: q.actionHash,
      executionHash: q.executionHash,
      rule: q.decision.policyId,
      reason: q.decision.reason,
      risk: q.decision.risk,
      shape: q.decision.shape,
      lineage: [...(deps.lineage ?? [runId])],
    },
    q.causationId,
  );
  deps.log.sync();
  const request = deps.tracker.state.approvals.requests[requestId];
  if (!request) throw new Error('approval request was not recorded');
  return request;
}
