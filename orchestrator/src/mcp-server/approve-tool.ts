import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { recordAnswer, treePending } from '../cli/approvals';
import { runGatehouse } from './gatehouse-child';
import type { ToolExtra } from './progress';
import { resumeArgs } from './run-args';
import { runOutcome } from './run-outcome';
import type { ServerState } from './server-state';
import { knownRun } from './status-tool';
import { childOptions, finished } from './run-tool';
import { outcomeResult, toolError } from './tool-result';

export const MAX_REASON = 2000;

export const ApproveInput = {
  runId: z.string().regex(/^run_[A-Za-z0-9_-]{1,80}$/, 'a run id, such as run_01J…'),
  requestId: z.string().min(1).max(200).describe('the pending request, from the run or status result'),
  decision: z.enum(['approve', 'deny']),
  reason: z
    .string()
    .max(MAX_REASON)
    .optional()
    .describe('why; recorded, and shown to the model on a deny (required to deny)'),
  scope: z.enum(['once', 'run']).default('once').describe('once: this call; run: the same action again in this run'),
};

/**
 * The approve tool: answers a pending request of a paused run this server started, the same way
 * `gatehouse approve|deny` does (an event in the run's log, by this account on behalf of the MCP
 * client), then — once nothing is pending — resumes the run and returns its outcome.
 */
export async function approveTool(
  state: ServerState,
  input: {
    runId: string;
    requestId: string;
    decision: 'approve' | 'deny';
    reason?: string | undefined;
    scope: 'once' | 'run';
  },
  extra: ToolExtra,
  client: string,
): Promise<CallToolResult> {
  const s = state.settings;
  const known = knownRun(state, input.runId);
  if (typeof known === 'string') return toolError(known);
  if (state.live.has(input.runId))
    return toolError(`run ${input.runId} is going; only a paused run is answered (call status to see when it pauses)`);
  if (input.decision === 'deny' && !input.reason?.trim())
    return toolError('a deny needs a reason (the model reads it); call approve again with reason');
  const pending = treePending(s.stateDir, input.runId);
  if (!pending.some((p) => p.request.requestId === input.requestId))
    return toolError(
      `run ${input.runId} has no pending request ${input.requestId}; pending: ` +
        `${pending.map((p) => p.request.requestId).join(', ') || 'none'} (call status ${input.runId})`,
    );
  // The last answer resumes the run: with no slot for it, nothing is recorded, so the call can simply be repeated.
  const last = pending.length === 1;
  const busy = last ? state.busy() : undefined;
  if (busy) return toolError(`nothing was recorded: the run could not be resumed after the answer: ${busy}`);
  const answered = recordAnswer(input.runId, input.requestId, {
    stateDir: s.stateDir,
    decision: input.decision === 'approve' ? 'grant' : 'deny',
    scope: input.scope,
    ...(input.reason?.trim() ? { reason: input.reason.trim() } : {}),
    onBehalfOf: client,
  });
  const note = `${answered.said}: ${input.requestId} (${answered.tool})`;
  if (!last) return outcomeResult(runOutcome(s.stateDir, input.runId), [note, 'other requests are still pending']);
  const end = await state.hold(input.runId, () =>
    runGatehouse(
      s.cli,
      resumeArgs(input.runId, s.stateDir, s.dockerHost, s.config),
      childOptions(state, input.runId, extra),
    ),
  );
  if (end.code !== 0 && end.code !== 3 && end.code !== 4 && end.code !== 130) {
    // A resume that refused (its run's repository gone, say) leaves the run paused: say why.
    const o = runOutcome(s.stateDir, input.runId);
    if (o.outcome === 'paused')
      return toolError(`${note}; the run could not be resumed: ${end.stderrTail.trim().slice(-1500)}`);
  }
  return finished(state, input.runId, end, [note]);
}
