import type { RequestState } from './state';
import type { ApprovalAnswer, ApprovalPrompt } from '../approval/channels/types';
import { previewOf } from '../approval/channels/preview';
import { record } from '../tools/pipeline/record';
import { recordObservation } from '../tools/pipeline/record-observation';
import type { Grant, PendingCall, PipelineDeps, Observation } from '../tools/pipeline/types';

/** Where approval leaves a call: cleared to run, declined (its observation recorded), or waiting. */
export type Approved = { kind: 'ready'; grant: Grant } | { kind: 'denied'; observation: Observation } | PendingCall;

/** Without a channel nobody can answer, and a headless run must never hang: the ask is denied. */
const NO_APPROVER: ApprovalAnswer = {
  decision: 'deny',
  approver: 'runtime:no-approver',
  channel: 'headless',
  reason: 'no approver is available in this run',
};

/**
 * Puts a recorded request to the run's channel and records the answer (`approval.granted`, made
 * durable, or `approval.denied`) before anything runs. A `pause` records nothing: the request
 * stays pending on record and the call waits for it.
 */
export async function askApprover(
  deps: PipelineDeps,
  request: RequestState,
  input: unknown,
  signal?: AbortSignal,
): Promise<Approved> {
  const prompt: ApprovalPrompt = {
    runId: deps.tracker.state.runId ?? 'unknown',
    requestId: request.requestId,
    tool: request.tool,
    input,
    actionHash: request.actionHash,
    rule: request.rule,
    reason: request.reason,
    risk: request.risk,
    preview: previewOf(request.tool, input),
    lineage: request.lineage,
  };
  const answer = deps.channel ? await deps.channel.ask(prompt, signal ?? new AbortController().signal) : NO_APPROVER;
  if (answer.decision === 'pause') {
    return { kind: 'pending', callId: request.callId, tool: request.tool, requestId: request.requestId };
  }
  if (answer.decision === 'deny') {
    record(
      deps,
      'approval.denied',
      'user',
      {
        requestId: request.requestId,
        callId: request.callId,
        actionHash: request.actionHash,
        approver: answer.approver,
        channel: answer.channel,
        reason: answer.reason,
      },
      request.eventId,
    );
    return declinedByPerson(deps, deps.tracker.state.approvals.requests[request.requestId] ?? request, input);
  }
  const granted = record(
    deps,
    'approval.granted',
    'user',
    {
      requestId: request.requestId,
      callId: request.callId,
      actionHash: request.actionHash,
      executionHash: request.executionHash,
      scope: answer.scope,
      approver: answer.approver,
      channel: answer.channel,
      reason: answer.reason ?? '',
    },
    request.eventId,
  );
  deps.log.sync();
  return { kind: 'ready', grant: { eventId: granted.id, executionHash: request.executionHash, by: 'user' } };
}

/** The observation of a call a person declined: who declined it and why, so the model chooses another way. */
export function declinedByPerson(
  deps: PipelineDeps,
  request: RequestState,
  input: unknown,
): { kind: 'denied'; observation: Observation } {
  const who = request.answer?.approver ?? 'the approver';
  const { observation } = recordObservation(deps, {
    callId: request.callId,
    tool: request.tool,
    outcome: 'denied',
    body:
      `${request.tool} was declined by ${who}: ${request.answer?.reason ?? 'no reason given'}. It was not run; ` +
      `choose another way.`,
    causationId: request.answer?.eventId ?? null,
    input,
  });
  return { kind: 'denied', observation };
}
