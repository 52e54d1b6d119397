import type { EventEnvelope, EventOf, RecoveryChoice } from '@gatehouse/shared';
import { record } from '../tools/pipeline/record';
import type { RecoveryStep } from './plan-types';
import type { RecoveryDeps } from './recovery-deps';

/** What the plan driver does with a person's choice. */
export function stepOf(choice: RecoveryChoice): RecoveryStep {
  return choice === 'retry' ? { kind: 'retry_task' } : choice === 'skip' ? { kind: 'skip' } : { kind: 'abort' };
}

/**
 * The step an answered escalation request leads to, read from the log: `approval.granted`'s choice
 * (a grant without one — a plain `gatehouse approve` — is retry, the "go on" of the three), and an
 * `approval.denied` is abort. Records `recovery.escalated` decided once; asked again (a second
 * resume) it records nothing more and gives the same step. Undefined while the request is
 * unanswered, or when it is not an escalation of this run.
 */
export function decidedEscalation(
  requestId: string,
  deps: Pick<RecoveryDeps, 'log' | 'tracker'>,
): RecoveryStep | undefined {
  const events = deps.log.events();
  const asked = escalationEvent(events, requestId, 'requested');
  const request = deps.tracker.state.approvals.requests[requestId];
  if (!asked || !request?.answer || request.status === 'pending') return undefined;
  const choice = request.status === 'denied' ? 'abort' : grantedChoice(events, request.answer.eventId);
  if (!escalationEvent(events, requestId, 'decided')) {
    const d = asked.data;
    record(
      deps,
      'recovery.escalated',
      'runtime',
      {
        planId: d.planId,
        taskId: d.taskId,
        class: d.class,
        reason: d.reason,
        status: 'decided',
        requestId,
        decision: choice,
        by: request.answer.approver.slice(0, 256),
      },
      request.answer.eventId,
    );
    deps.log.sync();
  }
  return stepOf(choice);
}

function escalationEvent(
  events: readonly EventEnvelope[],
  requestId: string,
  status: 'requested' | 'decided',
): EventOf<'recovery.escalated'> | undefined {
  return events.find(
    (e): e is EventOf<'recovery.escalated'> =>
      e.type === 'recovery.escalated' && e.data.requestId === requestId && e.data.status === status,
  );
}

function grantedChoice(events: readonly EventEnvelope[], grantId: string): RecoveryChoice {
  const grant = events.find((e): e is EventOf<'approval.granted'> => e.id === grantId && e.type === 'approval.granted');
  return grant?.data.choice ?? 'retry';
}
