import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';

/** One execution of a recorded run: what was proposed, exactly what was sent to run, and what came back. */
export interface RecordedExecution {
  callId: string;
  /** The tool called (unknown when the log has no intent for the call). */
  tool: string;
  /** The tool's input as validated (else as proposed): what read-only classification looks at. */
  toolInput: unknown;
  /** Gatehouse's own call (its run of the check, `check_N`), not the model's. */
  byRuntime: boolean;
  started: EventDataOf<'tool.execution.started'>;
  /** Absent when the log ends before the result (a crash mid-call). */
  completed?: EventDataOf<'tool.execution.completed'>;
}

/**
 * The executions of a recorded run, in the order they started: each `tool.execution.started` (what
 * the executor was sent, verbatim) with its call's intent and its completion. Calls that never ran
 * (rejected, denied, pending) have no execution and are not listed.
 */
export function recordedExecutions(events: readonly EventEnvelope[]): RecordedExecution[] {
  const intents = new Map<string, { tool: string; input: unknown; byRuntime: boolean }>();
  const runs: RecordedExecution[] = [];
  const byInvocation = new Map<string, RecordedExecution>();
  for (const e of events) {
    if (e.type === 'tool.intent') {
      intents.set(e.data.callId, { tool: e.data.tool, input: e.data.input, byRuntime: e.actor === 'runtime' });
    } else if (e.type === 'tool.validation' && e.data.ok && e.data.input !== undefined) {
      const intent = intents.get(e.data.callId);
      if (intent) intent.input = e.data.input;
    } else if (e.type === 'tool.execution.started') {
      const intent = intents.get(e.data.callId);
      const run: RecordedExecution = {
        callId: e.data.callId,
        tool: intent?.tool ?? 'unknown',
        toolInput: intent?.input,
        byRuntime: intent?.byRuntime ?? true,
        started: e.data,
      };
      runs.push(run);
      byInvocation.set(e.data.invocationId, run);
    } else if (e.type === 'tool.execution.completed') {
      const run = byInvocation.get(e.data.invocationId);
      if (run) run.completed = e.data;
    }
  }
  return runs;
}
