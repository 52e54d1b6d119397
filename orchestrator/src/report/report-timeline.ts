import type { EventEnvelope } from '@gatehouse/shared';
import type { AgentAction } from '../events/agent-node';
import type { ReportCall } from './report-call-schema';
import { approvalStateOf } from './report-calls';

/**
 * Every tool call of one run's log, in the order proposed, with each phase it reached: the timeline
 * the HTML report draws. `actions` are the same calls as the agent tree tells them (events/agent-node.ts),
 * whose `authorisedBy` says who let each one run; it is taken from there, not worked out again.
 */
export function timelineOf(events: readonly EventEnvelope[], actions: readonly AgentAction[]): ReportCall[] {
  const calls = new Map<string, ReportCall>();
  const tsOf = new Map(events.map((e) => [e.id, e.ts]));
  for (const e of events) {
    if (e.type === 'tool.intent') {
      const d = e.data;
      if (calls.has(d.callId)) continue;
      calls.set(d.callId, {
        callId: d.callId,
        turn: d.turn,
        tool: d.tool,
        actor: e.actor,
        input: d.input,
        proposedAt: e.ts,
        validation: null,
        decision: null,
        approval: null,
        authorisedBy: 'none',
        execution: null,
        observation: null,
        childRunId: null,
      });
      continue;
    }
    if (!('callId' in e.data) || typeof e.data.callId !== 'string') continue;
    const c = calls.get(e.data.callId);
    if (!c) continue;
    switch (e.type) {
      case 'tool.validation': {
        const d = e.data;
        c.validation = { ok: d.ok, stage: d.stage, errors: d.errors.map((x) => x.message), at: e.ts };
        break;
      }
      case 'tool.approval': {
        const d = e.data;
        c.decision = { decision: d.decision, rule: d.policyId, reason: d.reason, risk: d.risk ?? [], at: e.ts };
        break;
      }
      case 'tool.execution.started': {
        const d = e.data;
        c.execution = {
          executor: d.executor,
          primitive: d.primitive,
          startedAt: e.ts,
          status: null,
          exitCode: null,
          signal: null,
          durationMs: null,
          filesChanged: [],
          error: null,
          completedAt: null,
        };
        break;
      }
      case 'tool.execution.completed': {
        const d = e.data;
        if (!c.execution) break;
        c.execution = {
          ...c.execution,
          status: d.status,
          exitCode: d.exitCode,
          signal: d.signal,
          durationMs: d.durationMs,
          filesChanged: d.filesChanged,
          error: d.error ? `${d.error.code}: ${d.error.message}` : null,
          completedAt: e.ts,
        };
        break;
      }
      case 'tool.observation': {
        const d = e.data;
        c.observation = {
          observationId: d.observationId,
          outcome: d.outcome,
          content: d.content,
          truncated: d.truncated,
          at: e.ts,
        };
        break;
      }
      case 'agent.spawned':
        if (e.data.parentRunId === e.runId) c.childRunId = e.data.childRunId;
        break;
    }
  }
  for (const r of Object.values(approvalStateOf(events).requests)) {
    const c = calls.get(r.callId);
    if (!c || c.approval) continue;
    c.approval = {
      requestId: r.requestId,
      rule: r.rule,
      reason: r.reason,
      requestedAt: tsOf.get(r.eventId) ?? '',
      status: r.status,
      approver: r.answer?.approver ?? null,
      channel: r.answer?.channel ?? null,
      scope: r.answer?.scope ?? null,
      answer: r.answer?.reason || null,
      answeredAt: r.answer ? (tsOf.get(r.answer.eventId) ?? null) : null,
    };
  }
  for (const a of actions) {
    const c = calls.get(a.callId);
    if (c) c.authorisedBy = a.authorisedBy;
  }
  return [...calls.values()];
}
