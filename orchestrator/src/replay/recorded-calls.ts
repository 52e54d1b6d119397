import { isEvent, type EventDataOf, type EventEnvelope, type EventOf } from '@gatehouse/shared';

export type ReplayedDecision = EventDataOf<'replay.decision'>['then'];

/** One recorded tool call: its intent and what the gate did with it, as the log tells it. */
export interface RecordedCall {
  intent: EventOf<'tool.intent'>;
  /** Where the intent is in the log (the state folded before it is what the gate decided on). */
  index: number;
  validation?: EventOf<'tool.validation'>;
  approval?: EventOf<'tool.approval'>;
  /** How the model's call came (its arguments were not JSON, or cut off): the intent alone does not say. */
  modelCall?: { parseError?: string; truncated?: boolean };
  /** The recorded decision, or undefined when the log stops before one (a run cut short). */
  then: ReplayedDecision | undefined;
  /** It executed in the recorded run (a `tool.execution.started`). */
  ran: boolean;
}

/**
 * Each `tool.intent` of a run's log with the decision recorded for it: rejected by validation
 * (`runtime`), allowed or denied by the policy (`policy`, the rule that decided), or asked — then
 * decided by whoever answered (`approval.granted` / `approval.denied`, or a standing "for this run"
 * grant the execution cites), `null` when nobody had answered yet. The rule of an asked call is the
 * rule that asked.
 */
export function recordedCalls(events: readonly EventEnvelope[]): RecordedCall[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  const validation = new Map<string, EventOf<'tool.validation'>>();
  const approval = new Map<string, EventOf<'tool.approval'>>();
  const answer = new Map<string, string>();
  const started = new Map<string, EventOf<'tool.execution.started'>>();
  const modelCalls = new Map<string, { parseError?: string; truncated?: boolean }>();
  for (const e of events) {
    if (isEvent(e, 'tool.validation')) validation.set(e.data.callId, e);
    else if (isEvent(e, 'tool.approval')) approval.set(e.data.callId, e);
    else if (isEvent(e, 'approval.granted') || isEvent(e, 'approval.denied'))
      answer.set(e.data.callId, e.data.approver);
    else if (isEvent(e, 'tool.execution.started')) started.set(e.data.callId, e);
    else if (isEvent(e, 'model.output'))
      for (const c of e.data.toolCalls)
        modelCalls.set(c.callId, {
          ...(c.parseError !== undefined ? { parseError: c.parseError } : {}),
          ...(c.truncated ? { truncated: true } : {}),
        });
  }
  const calls: RecordedCall[] = [];
  events.forEach((e, index) => {
    if (!isEvent(e, 'tool.intent')) return;
    const id = e.data.callId;
    const v = validation.get(id);
    const a = approval.get(id);
    const ran = started.get(id);
    // A standing grant answers no request of this call: the execution names the grant it ran on.
    const grant = ran ? byId.get(ran.data.approvalId) : undefined;
    const grantedBy = grant && isEvent(grant, 'approval.granted') ? grant.data.approver : undefined;
    const m = modelCalls.get(id);
    calls.push({
      intent: e,
      index,
      ...(v ? { validation: v } : {}),
      ...(a ? { approval: a } : {}),
      ...(m ? { modelCall: m } : {}),
      then: thenDecision(v, a, answer.get(id) ?? grantedBy),
      ran: ran !== undefined,
    });
  });
  return calls;
}

function thenDecision(
  v: EventOf<'tool.validation'> | undefined,
  a: EventOf<'tool.approval'> | undefined,
  answeredBy: string | undefined,
): ReplayedDecision | undefined {
  if (v && !v.data.ok) return { decision: 'rejected', rule: validationRule(v.data.errors), by: 'runtime' };
  if (!a) return undefined;
  const d = a.data;
  const by = d.decision === 'ask' ? (answeredBy ?? null) : 'policy';
  return { decision: d.decision, rule: d.policyId.slice(0, 2000), by: by?.slice(0, 256) ?? null };
}

/** A rejection's rule: the validation codes that refused the call (`validation:unknown_tool`). */
export function validationRule(errors: ReadonlyArray<{ code: string }>): string {
  const codes = [...new Set(errors.map((x) => x.code))];
  return `validation:${codes.length > 0 ? codes.join(',') : 'invalid'}`.slice(0, 2000);
}
