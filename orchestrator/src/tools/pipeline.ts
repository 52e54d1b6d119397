import { newId } from '@gatehouse/shared';
import { approve } from '../approval/approve';
import { continueCall } from './pipeline/continue-call';
import { decide } from './pipeline/decide';
import { executeAndObserve } from './pipeline/execute-and-observe';
import { record } from './pipeline/record';
import { recordObservation } from './pipeline/record-observation';
import type { CallResult, PipelineDeps, ToolCall } from './pipeline/types';
import { validate } from './pipeline/validate';
import { canonicalOrDescribe, jsonSafe } from './recorded-values';

export type { CallResult, Observation, ObservedCall, PendingCall, PipelineDeps, ToolCall } from './pipeline/types';

/**
 * The one path from a model's proposed tool call to what the model is shown. Each phase is a
 * function in tools/pipeline/ (approval in approval/) that records its events and returns a tagged
 * result; a call that ends in a phase never reaches the next:
 *
 *   0. intent    `tool.intent`: the call as the model proposed it
 *   1. validate  known, on the surface, schema, paths inside the workspace, semantics → rejected | valid
 *   2. decide    plan, hash, policy decision (`tool.approval`)                      → denied | ready | ask
 *   3. approve   standing grant, or ask the channel and record its answer           → denied | pending | ready
 *   4. execute   `tool.execution.started`, then the plan runs on its executor        → cancelled | ran
 *   5. observe   `tool.execution.completed` and the one `tool.observation`           → observed | pending
 *
 * Whatever happens, a call ends in exactly one observation (`observed`) or waits for an approval
 * with no observation yet (`pending`, with the request it waits for), and bad model input never
 * throws. `continueCall` finishes a call a stopped run left open, reusing the
 * same phases from where the call got to.
 */
export class ToolPipeline {
  constructor(private readonly deps: PipelineDeps) {}

  async run(call: ToolCall, signal?: AbortSignal): Promise<CallResult> {
    const deps = this.deps;
    const toolName =
      typeof call.tool === 'string' ? call.tool.slice(0, 200) : String(canonicalOrDescribe(call.tool)).slice(0, 200);
    // Ids and turns come from model output too: an unusable one is replaced, never thrown on.
    call = {
      ...call,
      callId: /^[\w.:-]{1,128}$/.test(String(call.callId)) ? call.callId : newId('call'),
      turn: Number.isInteger(call.turn) && call.turn >= 0 ? call.turn : 0,
    };
    // 0. Intent.
    const intent = record(
      deps,
      'tool.intent',
      call.actor === 'runtime' ? 'runtime' : 'model',
      {
        callId: call.callId,
        turn: call.turn,
        tool: toolName,
        input: jsonSafe(call.input),
        ...(call.taskId !== undefined ? { taskId: call.taskId } : {}),
      },
      null,
    );
    try {
      // 1. Validate.
      const valid = await validate(deps, call, toolName, intent);
      if (valid.kind === 'rejected') return { kind: 'observed', observation: valid.observation };
      const { tool, input } = valid;
      // 2. Decide.
      const decided = decide(deps, valid);
      if (decided.kind === 'denied') return { kind: 'observed', observation: decided.observation };
      // 3. Approve, when the policy asks.
      const approved =
        decided.kind === 'ask'
          ? await approve(deps, { callId: call.callId, tool: toolName, input }, decided, signal)
          : decided;
      if (approved.kind === 'pending') return approved;
      if (approved.kind === 'denied') return { kind: 'observed', observation: approved.observation };
      // 4. Execute and 5. observe.
      return await executeAndObserve(deps, { callId: call.callId, tool, input }, decided.plan, approved.grant, signal);
    } catch (e) {
      // Our own failure, not the model's: still exactly one observation, and on record.
      return recordObservation(deps, {
        callId: call.callId,
        tool: toolName,
        outcome: 'failed',
        body: `internal error in gatehouse: ${(e as Error).message}. The call may not have run.`,
        causationId: intent.id,
      });
    }
  }

  /**
   * Continues a call a stopped run left unfinished (resume): it never runs anything twice. A call
   * whose execution started but never completed is reported as interrupted, not run again; one
   * that waits for approval runs only with a grant from the log.
   */
  continueCall(callId: string, signal?: AbortSignal): Promise<CallResult | undefined> {
    return continueCall(this.deps, callId, signal);
  }
}
