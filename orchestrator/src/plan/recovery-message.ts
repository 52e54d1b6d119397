import type { EventEnvelope, EventOf } from '@gatehouse/shared';

const RETRIED_CALL = /\.retry\d+$/;

/**
 * What the model is told about recovery, rendered from the log alone (no event of its own, so a
 * resumed or replayed run tells it the same): context/compile.ts calls this for each event, in
 * order, and adds the text as a user message when there is one.
 *  - recovery.applied `succeeded`: gatehouse ran the failed call again; the retried call's result
 *    (its observation, which the model would not see otherwise: the call is gatehouse's own).
 *  - recovery.applied `retrying` that the model must act on (feedback, or a retry with no call to
 *    repeat): what failed and that it should try again; a failed check's output comes with it.
 *  - recovery.escalated `decided`: what a person chose.
 * Everything else: undefined (the failed call's own observation is already the model's).
 */
export function recoveryMessage(event: EventEnvelope, events: readonly EventEnvelope[]): string | undefined {
  if (event.type === 'recovery.escalated') {
    const d = event.data;
    if (d.status !== 'decided' || !d.decision) return undefined;
    const next =
      d.decision === 'retry'
        ? 'The task starts again; if the cause was in your approach, take another.'
        : d.decision === 'skip'
          ? 'The task is skipped, and the tasks that depend on it.'
          : 'The plan stops here.';
    return `Task ${d.taskId} failed (${d.class}) and was put to a person, who chose ${d.decision}. ${next}`;
  }
  if (event.type !== 'recovery.applied') return undefined;
  const d = event.data;
  const at = events.findIndex((e) => e.id === event.id);
  if (d.outcome === 'succeeded') {
    // Only a retry gatehouse ran itself has a result the model has not seen: its call, after this
    // attempt's `retrying`. A retry the model made (feedback) succeeded with the model's own calls.
    const began = lastBefore(
      events,
      at,
      'recovery.applied',
      (e) => sameAttempt(e.data, d) && e.data.outcome === 'retrying',
    );
    const retried = lastBefore(events, at, 'tool.observation', (o) => RETRIED_CALL.test(o.data.callId));
    if (!retried || !began || events.indexOf(retried) < events.indexOf(began)) return undefined;
    const original = retried.data.callId.replace(RETRIED_CALL, '');
    return (
      `Your call ${original} failed (${d.class}); gatehouse ran it again (retry ${d.attempt} of ${d.maxAttempts}, ` +
      `recipe ${d.recipe}) and this time it succeeded. Its result:\n${retried.data.content}`
    );
  }
  if (d.outcome !== 'retrying') return undefined;
  const after = events[at + 1];
  // An automatic retry follows at once: the model hears how it ended (succeeded), not that it began.
  if (after?.type === 'tool.intent' && after.actor === 'runtime' && RETRIED_CALL.test(after.data.callId)) {
    return undefined;
  }
  const classified = lastBefore(events, at, 'failure.classified', (c) => c.data.taskId === d.taskId);
  const evidence = classified ? `: ${classified.data.evidence}` : '';
  const lines = [
    `Task ${d.taskId} did not succeed (${d.class}${evidence}). Attempt ${d.attempt} of ${d.maxAttempts} ` +
      `(recipe ${d.recipe}): fix the cause and finish the task again with complete_task.`,
  ];
  const shown = classified?.data.callId ? runtimeObservation(events, at, classified.data.callId) : undefined;
  if (shown) lines.push(`What failed (${shown.data.tool}):\n${shown.data.content}`);
  return lines.join('\n');
}

function sameAttempt(a: EventOf<'recovery.applied'>['data'], b: EventOf<'recovery.applied'>['data']): boolean {
  return a.planId === b.planId && a.taskId === b.taskId && a.class === b.class && a.attempt === b.attempt;
}

function lastBefore<T extends EventEnvelope['type']>(
  events: readonly EventEnvelope[],
  at: number,
  type: T,
  match: (e: EventOf<T>) => boolean,
): EventOf<T> | undefined {
  for (let i = at - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === type && match(e as EventOf<T>)) return e as EventOf<T>;
  }
  return undefined;
}

/** The observation of gatehouse's own call (a check): the model's own calls' observations it has already seen. */
function runtimeObservation(
  events: readonly EventEnvelope[],
  at: number,
  callId: string,
): EventOf<'tool.observation'> | undefined {
  const intent = lastBefore(events, at, 'tool.intent', (e) => e.data.callId === callId);
  if (intent?.actor !== 'runtime') return undefined;
  return lastBefore(events, at, 'tool.observation', (e) => e.data.callId === callId);
}
