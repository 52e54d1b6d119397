import type { RequestState } from './state';
import type { ApprovalAnswer, ApprovalPrompt } from '../approval/channels/types';
import { checkPlanAnswer, type Answered } from './plan-answer';
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

/** Answers that do not fit their request (changes a plan cannot take) asked again before the request is left open. */
const MAX_UNFIT_ANSWERS = 3;

/**
 * Puts a recorded request to the run's channel and records the answer (`approval.granted`, made
 * durable, or `approval.denied`) before anything runs. A `pause` records nothing: the request
 * stays pending on record and the call waits for it. An answer that does not fit the request (a
 * plan's changes that break it, an escalation granted without a choice) is never recorded: the
 * channel is asked again, and after a few such answers the request is left pending.
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
  const pending: Approved = {
    kind: 'pending',
    callId: request.callId,
    tool: request.tool,
    requestId: request.requestId,
  };
  let answer: Answered | undefined;
  for (let unfit = 0; answer === undefined; unfit++) {
    if (unfit >= MAX_UNFIT_ANSWERS) return pending;
    const raw = deps.channel ? await deps.channel.ask(prompt, signal ?? new AbortController().signal) : NO_APPROVER;
    if (raw.decision === 'pause') return pending;
    const checked = checkPlanAnswer(request.tool, input, raw);
    if (checked.ok) answer = checked.answer;
  }
  const eventId = recordAnswer(deps, request, answer);
  if (answer.decision === 'deny')
    return declinedByPerson(deps, deps.tracker.state.approvals.requests[request.requestId] ?? request, input);
  return { kind: 'ready', grant: { eventId, executionHash: request.executionHash, by: 'user' } };
}

/**
 * Records a checked answer to a pending request: `approval.granted` (with a plan's changes or an
 * escalation's choice) made durable, or `approval.denied` (a question about a plan marked clarify).
 */
export function recordAnswer(deps: PipelineDeps, request: RequestState, answer: Answered): string {
  if (answer.decision === 'deny') {
    return record(
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
        ...(answer.clarify ? { clarify: true } : {}),
      },
      request.eventId,
    ).id;
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
      ...(answer.changes ? { changes: answer.changes } : {}),
      ...(answer.choice ? { choice: answer.choice } : {}),
    },
    request.eventId,
  );
  deps.log.sync();
  return granted.id;
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
    // A question about a plan is not a rejection: the model answers it and submits the plan again.
    body: request.answer?.clarify
      ? `The reviewer asks: ${request.answer.reason}; answer it and submit the plan again. (${who} asked a ` +
        `question about the plan; it is neither approved nor rejected yet.)`
      : `${request.tool} was declined by ${who}: ${request.answer?.reason ?? 'no reason given'}. It was not run; ` +
        `choose another way.`,
    causationId: request.answer?.eventId ?? null,
    input,
  });
  return { kind: 'denied', observation };
}
