import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';

/** One tool call as the log tells it: what an auditor asks, answered from events alone. */
export interface ActionAccount {
  callId: string;
  turn: number;
  proposed: { tool: string; input: unknown; eventId: string };
  validation: { ok: boolean; stage: string; errors: EventDataOf<'tool.validation'>['errors']; input?: unknown };
  approval?: { decision: string; policyId: string; reason: string; actionHash: string };
  executed?: { primitive: string; input: unknown; timeoutMs: number; sandboxId?: string; approvalId: string };
  result?: {
    status: string;
    exitCode: number | null;
    bytes: number;
    truncated: boolean;
    durationMs: number;
    filesChanged: string[];
    artifactRefs: string[];
  };
  shown: { observationId: string; outcome: string; content: string };
}

/** Every tool call of a run, in order, reconstructed from its events. */
export function explainRun(events: readonly EventEnvelope[]): ActionAccount[] {
  const byCall = new Map<string, Partial<ActionAccount> & { callId: string }>();
  for (const e of events) {
    if (!e.type.startsWith('tool.') || !('callId' in e.data) || typeof e.data.callId !== 'string') continue;
    const callId = e.data.callId;
    const a = byCall.get(callId) ?? { callId };
    byCall.set(callId, a);
    switch (e.type) {
      case 'tool.intent': {
        const x = e.data;
        Object.assign(a, { turn: x.turn, proposed: { tool: x.tool, input: x.input, eventId: e.id } });
        break;
      }
      case 'tool.validation': {
        const x = e.data;
        a.validation = {
          ok: x.ok,
          stage: x.stage,
          errors: x.errors,
          ...(x.input !== undefined ? { input: x.input } : {}),
        };
        break;
      }
      case 'tool.approval': {
        const x = e.data;
        a.approval = { decision: x.decision, policyId: x.policyId, reason: x.reason, actionHash: x.actionHash };
        break;
      }
      case 'tool.execution.started': {
        const x = e.data;
        a.executed = {
          primitive: x.primitive,
          input: x.input,
          timeoutMs: x.timeoutMs,
          approvalId: x.approvalId,
          ...(x.sandboxId ? { sandboxId: x.sandboxId } : {}),
        };
        break;
      }
      case 'tool.execution.completed': {
        const x = e.data;
        a.result = {
          status: x.status,
          exitCode: x.exitCode,
          bytes: x.bytes,
          truncated: x.truncated,
          durationMs: x.durationMs,
          filesChanged: x.filesChanged,
          artifactRefs: x.artifactRefs,
        };
        break;
      }
      case 'tool.observation': {
        const x = e.data;
        a.shown = { observationId: x.observationId, outcome: x.outcome, content: x.content };
        break;
      }
    }
  }
  return [...byCall.values()].filter((a): a is ActionAccount => Boolean(a.proposed && a.validation && a.shown));
}
