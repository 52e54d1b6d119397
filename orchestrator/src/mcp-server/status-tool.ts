import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { runOutcome, type RunOutcome } from './run-outcome';
import type { ServerState } from './server-state';
import { outcomeResult, toolError } from './tool-result';

export const StatusInput = {
  runId: z
    .string()
    .regex(/^run_[A-Za-z0-9_-]{1,80}$/, 'a run id, such as run_01J…')
    .optional()
    .describe('a run this server started; without it, every run of this session, newest first'),
};

/** The status tool: one run's state (the same shape run returns), or the session's runs. */
export function statusTool(state: ServerState, input: { runId?: string | undefined }): CallToolResult {
  if (input.runId !== undefined) {
    const known = knownRun(state, input.runId);
    if (typeof known === 'string') return toolError(known);
    return outcomeResult(outcomeOf(state, input.runId));
  }
  const runs = [...state.runs.values()].reverse().map((r) => {
    const o = outcomeOf(state, r.runId);
    return {
      runId: r.runId,
      outcome: o.outcome,
      repository: r.repository,
      task: r.task,
      startedAt: r.startedAt,
      pending: o.pending.length,
    };
  });
  const text =
    runs.length === 0
      ? 'no runs yet in this session (the run tool starts one)'
      : runs.map((r) => `${r.runId}  ${r.outcome}  ${r.repository}  ${JSON.stringify(r.task)}`).join('\n');
  return { content: [{ type: 'text', text }], structuredContent: { runs } };
}

/** A run of this session, or why the caller may not see or answer it. */
export function knownRun(state: ServerState, runId: string): true | string {
  if (state.runs.has(runId)) return true;
  return (
    `run ${runId} was not started by this server session; status and approve act only on the runs it started ` +
    '(call status without a runId to list them). A person answers other runs with gatehouse approve.'
  );
}

function outcomeOf(state: ServerState, runId: string): RunOutcome {
  if (state.live.has(runId)) {
    const o = safeOutcome(state, runId);
    return { ...o, outcome: 'running', pending: [] };
  }
  return safeOutcome(state, runId);
}

/** A run's outcome; a log not yet written (a child still starting) reads as running. */
function safeOutcome(state: ServerState, runId: string): RunOutcome {
  try {
    return runOutcome(state.settings.stateDir, runId);
  } catch {
    return { runId, outcome: 'running', filesChanged: [], pending: [], runDir: '' };
  }
}
