import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { applyApproval, initialApprovalState } from '../approval/state';

/**
 * One agent's own account of its run, read from its own log alone: its task and ending, what it
 * did, who allowed each action, and its approval requests. The tree of agents (lineage.ts) joins
 * these and checks them against each other.
 */

export type AgentStatus = 'final' | 'partial' | 'failed' | 'cancelled' | 'paused' | 'running';

export interface AgentAction {
  callId: string;
  tool: string;
  /** The proposed input as compact JSON, cut to a line. */
  input: string;
  /** The last tool.observation's outcome; 'none' when nothing was shown (yet). */
  outcome: string;
  /**
   * What allowed it to run: the policy rule's id, or `APPROVER via CHANNEL (SCOPE)` (the approver as
   * recorded: `user:NAME`, `ci:…`). For a call
   * that did not run, `none (…)` says what stopped it.
   */
  authorisedBy: string;
}

export interface AgentApproval {
  requestId: string;
  tool: string;
  status: 'pending' | 'granted' | 'denied';
  approver?: string;
  channel?: string;
}

export interface AgentNode {
  runId: string;
  parentRunId: string | null;
  depth: number;
  task: string;
  status: AgentStatus;
  stopReason: string | null;
  /** The tools it could see (run.started.surface). */
  tools: string[];
  actions: AgentAction[];
  approvals: AgentApproval[];
  children: AgentNode[];
  problems: string[];
}

const BRIEF = 120;

/** One agent's own account, from its own log. */
export function nodeFromEvents(runId: string, events: readonly EventEnvelope[], depth: number): AgentNode {
  const started = events.find((e) => e.type === 'run.started')?.data;
  let status: AgentStatus = 'running';
  let stopReason: string | null = null;
  for (const e of events) {
    if (e.type === 'run.completed') {
      const d = e.data;
      status = d.status;
      stopReason = d.stopReason;
    } else if (e.type === 'run.paused') {
      status = 'paused';
      stopReason = 'awaiting_approval';
    } else if (e.type === 'run.resumed') {
      status = 'running';
      stopReason = null;
    }
  }
  const problems: string[] = [];
  return {
    runId,
    parentRunId: events[0]?.parentRunId ?? null,
    depth,
    task: started?.task ?? '',
    status,
    stopReason,
    tools: started ? [...started.surface] : [],
    actions: actionsOf(events, problems),
    approvals: approvalsOf(events),
    children: [],
    problems,
  };
}

function actionsOf(events: readonly EventEnvelope[], problems: string[]): AgentAction[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  interface Call {
    callId: string;
    tool: string;
    input: unknown;
    rejectedAt?: string;
    decision?: EventDataOf<'tool.approval'>;
    requestId?: string;
    approvalId?: string;
    outcome?: string;
  }
  const calls = new Map<string, Call>();
  for (const e of events) {
    if (!e.type.startsWith('tool.') && e.type !== 'approval.requested') continue;
    if (!('callId' in e.data) || typeof e.data.callId !== 'string') continue;
    if (e.type === 'tool.intent') {
      const x = e.data;
      if (!calls.has(x.callId)) calls.set(x.callId, { callId: x.callId, tool: x.tool, input: x.input });
      continue;
    }
    const c = calls.get(e.data.callId);
    if (!c) continue;
    switch (e.type) {
      case 'tool.validation': {
        const x = e.data;
        if (!x.ok) c.rejectedAt = x.stage;
        break;
      }
      case 'tool.approval':
        c.decision = e.data;
        break;
      case 'approval.requested':
        c.requestId = e.data.requestId;
        break;
      case 'tool.execution.started':
        c.approvalId = e.data.approvalId;
        break;
      case 'tool.observation':
        c.outcome = e.data.outcome;
        break;
    }
  }
  const answers = new Map<string, EventEnvelope>();
  for (const e of events) {
    if (e.type === 'approval.granted' || e.type === 'approval.denied') answers.set(e.data.requestId, e);
  }
  return [...calls.values()].map((c) => ({
    callId: c.callId,
    tool: c.tool,
    input: brief(c.input),
    outcome: c.outcome ?? 'none',
    authorisedBy:
      c.approvalId !== undefined ? authority(c.callId, c.approvalId, byId, problems) : stoppedBy(c, answers),
  }));
}

/** Who or what let an execution happen, from the event its approvalId points at. */
function authority(callId: string, approvalId: string, byId: Map<string, EventEnvelope>, problems: string[]): string {
  const a = byId.get(approvalId);
  if (a?.type === 'tool.approval') {
    const d = a.data;
    if (d.decision !== 'allow' || d.callId !== callId)
      problems.push(`${callId} ran under ${approvalId}, a ${d.decision} decision for ${d.callId}`);
    return d.policyId;
  }
  if (a?.type === 'approval.granted') {
    const g = a.data;
    if (a.actor !== 'user')
      problems.push(`${callId} ran under ${approvalId}, a grant not recorded as a person's (actor ${a.actor})`);
    return `${g.approver} via ${g.channel} (${g.scope})`;
  }
  problems.push(`${callId} ran under ${approvalId}, which is not an approval in this log`);
  return `unknown (${approvalId})`;
}

function stoppedBy(
  c: { rejectedAt?: string; decision?: EventDataOf<'tool.approval'>; requestId?: string },
  answers: Map<string, EventEnvelope>,
): string {
  if (c.rejectedAt) return `none (rejected at ${c.rejectedAt})`;
  if (c.decision?.decision === 'deny') return `none (denied by ${c.decision.policyId})`;
  if (c.requestId) {
    const a = answers.get(c.requestId);
    if (a?.type === 'approval.denied') {
      const d = a.data;
      return `none (denied by ${d.approver} via ${d.channel})`;
    }
    if (a?.type === 'approval.granted') {
      const g = a.data;
      return `none (granted by ${g.approver} via ${g.channel}, not run)`;
    }
    return `none (awaiting ${c.requestId})`;
  }
  return 'none';
}

/** Requests and their answers as the run's approval state folds them (a mismatched answer is no answer). */
function approvalsOf(events: readonly EventEnvelope[]): AgentApproval[] {
  const s = initialApprovalState();
  for (const e of events) applyApproval(s, e);
  return Object.values(s.requests).map((r) => ({
    requestId: r.requestId,
    tool: r.tool,
    status: r.status,
    ...(r.answer ? { approver: r.answer.approver, channel: r.answer.channel } : {}),
  }));
}

export function asStatus(s: string): AgentStatus {
  return (['final', 'partial', 'failed', 'cancelled', 'paused', 'running'] as const).find((x) => x === s) ?? 'failed';
}

export function brief(value: unknown, max = BRIEF): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
