import type { EventEnvelope, PlanChanges, RecoveryChoice } from '@gatehouse/shared';
import { ESCALATION, SUBMIT_PLAN } from './plan-answer';

/**
 * Requests a grant answers once, whatever scope it names: a plan's approval is the scope of what
 * follows, so it never stands for a later plan (an identical resubmission would restart every task
 * and drop the approver's changes); an escalation's choice decides that failure only.
 */
const ONCE_ONLY: readonly string[] = [SUBMIT_PLAN, ESCALATION];

/** One approval request as the log tells it. */
export interface RequestState {
  requestId: string;
  /** The approval.requested event. */
  eventId: string;
  callId: string;
  tool: string;
  input: unknown;
  actionHash: string;
  executionHash: string;
  rule: string;
  reason: string;
  risk: string[];
  shape: string;
  lineage: string[];
  status: 'pending' | 'granted' | 'denied';
  /** Set once answered. */
  answer?: {
    eventId: string;
    scope?: 'once' | 'run';
    approver: string;
    channel: string;
    /** A denial's reason, or with `clarify` the approver's question; a grant's optional note. */
    reason: string;
    /** submit_plan granted with changes (already validated against the plan): apply them to its tasks. */
    changes?: PlanChanges;
    /** escalation granted: what to do with the task. An escalation denied means abort. */
    choice?: RecoveryChoice;
    /** submit_plan denied as a question for the model (`reason`), not a rejection. */
    clarify?: true;
  };
}

/** Where each tool call got to, so a resumed run continues it instead of starting it again. */
export interface CallState {
  callId: string;
  tool: string;
  input: unknown;
  /** Proposed by gatehouse itself (its run of the check), not the model: the tool.intent's actor. */
  byRuntime?: boolean;
  /** The validated input, once validation passed. */
  validated?: unknown;
  decision?: { decision: 'allow' | 'ask' | 'deny'; eventId: string; executionHash?: string; actionHash: string };
  requestId?: string;
  started?: { invocationId: string; approvalId: string; eventId: string };
  completed: boolean;
  /** The completion, once recorded (what a resumed run reports if the observation was never written). */
  result?: { eventId: string; status: string; exitCode: number | null; artifactRefs: string[] };
  observed: boolean;
}

/**
 * Approval state, folded from the log only: a grant exists because an `approval.granted` event
 * answered a matching `approval.requested` — never because of model text, tool output or file
 * content. A grant that does not answer a pending request of the same action is ignored.
 */
export interface ApprovalState {
  requests: Record<string, RequestState>;
  /** actionHash → the grant event of a `run`-scoped approval. */
  runGrants: Record<string, string>;
  /** Grant event ids already used by an execution (`once` grants are used up by it). */
  consumed: Set<string>;
  /** Shapes a person approved for the run (confirm-novel). */
  approvedShapes: Set<string>;
  calls: Record<string, CallState>;
  /** True between `run.paused` and `run.resumed`. */
  paused: boolean;
}

export function initialApprovalState(): ApprovalState {
  return { requests: {}, runGrants: {}, consumed: new Set(), approvedShapes: new Set(), calls: {}, paused: false };
}

export function cloneApprovalState(s: ApprovalState): ApprovalState {
  return structuredClone(s);
}

export function applyApproval(s: ApprovalState, event: EventEnvelope): void {
  switch (event.type) {
    case 'tool.intent': {
      const d = event.data;
      s.calls[d.callId] = {
        callId: d.callId,
        tool: d.tool,
        input: d.input,
        ...(event.actor === 'runtime' ? { byRuntime: true } : {}),
        completed: false,
        observed: false,
      };
      return;
    }
    case 'tool.validation': {
      const d = event.data;
      const call = s.calls[d.callId];
      if (call && d.ok) call.validated = d.input;
      return;
    }
    case 'tool.approval': {
      const d = event.data;
      const call = s.calls[d.callId];
      if (call)
        call.decision = {
          decision: d.decision,
          eventId: event.id,
          actionHash: d.actionHash,
          ...(d.executionHash ? { executionHash: d.executionHash } : {}),
        };
      return;
    }
    case 'approval.requested': {
      const d = event.data;
      if (s.requests[d.requestId]) return; // a request id is used once
      s.requests[d.requestId] = { ...d, eventId: event.id, status: 'pending' };
      const call = s.calls[d.callId];
      if (call) call.requestId = d.requestId;
      return;
    }
    case 'approval.granted': {
      const d = event.data;
      const r = s.requests[d.requestId];
      if (
        !r ||
        r.status !== 'pending' ||
        r.actionHash !== d.actionHash ||
        r.executionHash !== d.executionHash ||
        event.actor !== 'user'
      )
        return;
      r.status = 'granted';
      r.answer = {
        eventId: event.id,
        scope: d.scope,
        approver: d.approver,
        channel: d.channel,
        reason: d.reason,
        ...(d.changes ? { changes: d.changes } : {}),
        ...(d.choice ? { choice: d.choice } : {}),
      };
      // Only "approve for this run" stands for the shape; "approve once" is this one action.
      if (d.scope === 'run' && !ONCE_ONLY.includes(r.tool)) {
        s.runGrants[d.actionHash] = event.id;
        s.approvedShapes.add(r.shape);
      }
      return;
    }
    case 'approval.denied': {
      const d = event.data;
      const r = s.requests[d.requestId];
      if (!r || r.status !== 'pending' || r.actionHash !== d.actionHash) return;
      r.status = 'denied';
      r.answer = {
        eventId: event.id,
        approver: d.approver,
        channel: d.channel,
        reason: d.reason,
        ...(d.clarify ? { clarify: true as const } : {}),
      };
      return;
    }
    case 'tool.execution.started': {
      const d = event.data;
      s.consumed.add(d.approvalId);
      const call = s.calls[d.callId];
      if (call) call.started = { invocationId: d.invocationId, approvalId: d.approvalId, eventId: event.id };
      return;
    }
    case 'tool.execution.completed': {
      const d = event.data;
      const call = s.calls[d.callId];
      if (call) {
        call.completed = true;
        call.result = { eventId: event.id, status: d.status, exitCode: d.exitCode, artifactRefs: d.artifactRefs };
      }
      return;
    }
    case 'tool.observation': {
      const call = s.calls[event.data.callId];
      if (call) call.observed = true;
      return;
    }
    case 'run.paused':
      s.paused = true;
      return;
    case 'run.resumed':
      s.paused = false;
      return;
    default:
      return;
  }
}

/** Requests still waiting for an answer. */
export function pendingRequests(s: ApprovalState): RequestState[] {
  return Object.values(s.requests).filter((r) => r.status === 'pending');
}

/**
 * The grant that lets this exact action run now: its own request's unused grant, or a standing
 * `run`-scoped grant of the same action hash. `once` grants are used up by the execution they allow.
 */
export function usableGrant(
  s: ApprovalState,
  actionHash: string,
  requestId?: string,
): { eventId: string; approver: string; scope: 'once' | 'run' } | undefined {
  const own = requestId ? s.requests[requestId] : undefined;
  if (
    own?.status === 'granted' &&
    own.answer &&
    own.actionHash === actionHash &&
    (own.answer.scope === 'run' || !s.consumed.has(own.answer.eventId))
  ) {
    return { eventId: own.answer.eventId, approver: own.answer.approver, scope: own.answer.scope ?? 'once' };
  }
  const standing = s.runGrants[actionHash];
  if (standing) {
    const r = Object.values(s.requests).find((q) => q.answer?.eventId === standing);
    return { eventId: standing, approver: r?.answer?.approver ?? 'unknown', scope: 'run' };
  }
  return undefined;
}
