import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { applyApproval, initialApprovalState, type ApprovalState } from '../approval/state';
import type { ReportApproval, ReportCommand, ReportRefusal } from './report-schema';

/** What the report says about a run's tool calls, read from its events alone. */

interface Call {
  callId: string;
  tool: string;
  input: unknown;
  /** Who proposed it (the model; the runtime for gatehouse's own check). */
  actor: string;
  completed?: EventDataOf<'tool.execution.completed'>;
  observation?: EventDataOf<'tool.observation'>;
}

function callsOf(events: readonly EventEnvelope[]): Map<string, Call> {
  const calls = new Map<string, Call>();
  for (const e of events) {
    if (e.type === 'tool.intent') {
      const d = e.data;
      if (!calls.has(d.callId)) calls.set(d.callId, { callId: d.callId, tool: d.tool, input: d.input, actor: e.actor });
    } else if (e.type === 'tool.execution.completed') {
      const c = calls.get(e.data.callId);
      if (c) c.completed = e.data;
    } else if (e.type === 'tool.observation') {
      const c = calls.get(e.data.callId);
      if (c) c.observation = e.data;
    }
  }
  return calls;
}

/** The command line of a bash call's input (any other shape is shown as its JSON). */
function commandOf(input: unknown): string {
  if (input && typeof input === 'object' && typeof (input as { command?: unknown }).command === 'string')
    return (input as { command: string }).command;
  return JSON.stringify(input) ?? String(input);
}

/** Every `bash` call, in the order proposed, with how it ended. */
export function commandsOf(events: readonly EventEnvelope[]): ReportCommand[] {
  const gatehouseChecks = new Set<string>();
  for (const e of events)
    if (e.type === 'run.check' && e.data.ranBy === 'gatehouse') gatehouseChecks.add(e.data.callId);
  return [...callsOf(events).values()]
    .filter((c) => c.tool === 'bash')
    .map((c) => ({
      callId: c.callId,
      command: commandOf(c.input),
      ranBy: gatehouseChecks.has(c.callId) || c.actor !== 'model' ? ('gatehouse' as const) : ('model' as const),
      exitCode: c.completed?.exitCode ?? null,
      status: c.completed?.status ?? 'not_run',
      outcome: c.observation?.outcome ?? null,
      observationId: c.observation?.observationId ?? null,
      durationMs: c.completed?.durationMs ?? null,
    }));
}

/** Tool calls counted by tool name. */
export function toolCallsByTool(events: readonly EventEnvelope[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of callsOf(events).values()) counts[c.tool] = (counts[c.tool] ?? 0) + 1;
  return counts;
}

/** Requests and their answers as the run's approval state folds them (an answer that does not match is none). */
export function approvalStateOf(events: readonly EventEnvelope[]): ApprovalState {
  const s = initialApprovalState();
  for (const e of events) applyApproval(s, e);
  return s;
}

/** Approval requests and their answers, as the run's approval state folds them. */
export function approvalsOf(events: readonly EventEnvelope[]): ReportApproval[] {
  const tsOf = new Map(events.map((e) => [e.id, e.ts]));
  return Object.values(approvalStateOf(events).requests).map((r) => ({
    requestId: r.requestId,
    callId: r.callId,
    tool: r.tool,
    rule: r.rule,
    status: r.status,
    approver: r.answer?.approver ?? null,
    channel: r.answer?.channel ?? null,
    scope: r.answer?.scope ?? null,
    reason: r.answer?.reason || null,
    requestedAt: tsOf.get(r.eventId) ?? '',
    answeredAt: r.answer ? (tsOf.get(r.answer.eventId) ?? null) : null,
  }));
}

const refusal = (r: Partial<ReportRefusal> & Pick<ReportRefusal, 'kind' | 'reason'>): ReportRefusal => ({
  callId: null,
  tool: null,
  path: null,
  by: null,
  ...r,
});

/**
 * What was denied or refused, in log order: policy denials, people's denials, calls rejected by
 * validation, approval answers refused, and what the end of the run (or a sub-agent) did not carry
 * over. `completed` is the run's last run.completed.
 */
export function refusalsOf(
  events: readonly EventEnvelope[],
  completed: EventDataOf<'run.completed'> | undefined,
): ReportRefusal[] {
  const calls = callsOf(events);
  const toolOf = (callId: string) => calls.get(callId)?.tool ?? null;
  const out: ReportRefusal[] = [];
  for (const e of events) {
    switch (e.type) {
      case 'tool.validation': {
        const d = e.data;
        if (!d.ok)
          out.push(
            refusal({
              kind: 'rejected',
              callId: d.callId,
              tool: toolOf(d.callId),
              by: `validation (${d.stage})`,
              reason: d.errors.map((x) => x.message).join('; ') || 'rejected',
            }),
          );
        break;
      }
      case 'tool.approval': {
        const d = e.data;
        if (d.decision === 'deny')
          out.push(
            refusal({ kind: 'policy', callId: d.callId, tool: toolOf(d.callId), by: d.policyId, reason: d.reason }),
          );
        break;
      }
      case 'approval.denied': {
        const d = e.data;
        out.push(
          refusal({
            kind: 'person',
            callId: d.callId,
            tool: toolOf(d.callId),
            by: `${d.approver} via ${d.channel}`,
            reason: d.reason,
          }),
        );
        break;
      }
      case 'approval.rejected': {
        const d = e.data;
        out.push(refusal({ kind: 'answer_rejected', by: d.channel, reason: `answer to ${d.requestId}: ${d.reason}` }));
        break;
      }
      case 'agent.completed': {
        const d = e.data;
        if (d.parentRunId !== e.runId) break;
        for (const p of d.withheld)
          out.push(
            refusal({
              kind: 'sub_agent',
              path: p,
              by: d.childRunId,
              reason: "changed outside the sub-agent's paths: not applied",
            }),
          );
        for (const line of d.denied ?? []) out.push(refusal({ kind: 'sub_agent', by: d.childRunId, reason: line }));
        break;
      }
    }
  }
  for (const r of completed?.refused ?? []) out.push(refusal({ kind: 'apply', path: r.path, reason: r.reason }));
  if (completed?.applyError) out.push(refusal({ kind: 'apply', reason: completed.applyError }));
  for (const s of completed?.skipped ?? [])
    out.push(refusal({ kind: 'not_exported', path: s.path, reason: `${s.reason} (${s.size} bytes)` }));
  return out;
}

/** The content of an observation, by its id. */
export function observationText(events: readonly EventEnvelope[], observationId: string): string | null {
  for (const e of events)
    if (e.type === 'tool.observation' && e.data.observationId === observationId) return e.data.content;
  return null;
}
