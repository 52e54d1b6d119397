import type { EventEnvelope, PlanTask } from '@gatehouse/shared';

/**
 * What the model is told of the plan, as user messages projected from the plan events: the gate's
 * answer (the approved plan, a rejection's reason, an approver's question), the task it is on now,
 * and how tasks ended. Undefined for every other event.
 */
export function planMessage(e: EventEnvelope): string | undefined {
  switch (e.type) {
    case 'plan.gate': {
      const d = e.data;
      const by = d.by ? ` (by ${d.by})` : '';
      if (d.status === 'approved' || d.status === 'modified')
        return (
          `The plan was ${d.status === 'modified' ? 'approved with changes' : 'approved'}${by}. ` +
          `Execute exactly these tasks, in this order:\n${(d.tasks ?? []).map(taskLine).join('\n')}` +
          (d.changes?.skip?.length ? `\nSkipped by the approver (do not do them): ${d.changes.skip.join(', ')}` : '')
        );
      if (d.status === 'rejected')
        return (
          `The plan was rejected${by}: ${d.reason ?? 'no reason given'}\n` +
          'Revise it and submit a new plan with submit_plan.'
        );
      if (d.status === 'clarification')
        return (
          `The approver asks about your plan${by}: ${d.reason ?? ''}\n` +
          'Answer by submitting a revised plan with submit_plan (it may say more in its task titles).'
        );
      return undefined;
    }
    case 'task.started': {
      const d = e.data;
      return (
        `[Task ${d.index}/${d.total}] now: ${d.taskId} — ${d.title}` +
        (d.attempt > 1 ? ` (attempt ${d.attempt})` : '') +
        '\nWork only on this task; end it with complete_task {"taskId": "' +
        d.taskId +
        '", "summary": "…citing [obs-N]"}.'
      );
    }
    case 'task.completed': {
      const checked = e.data.check ? ` (check exit ${e.data.check.exitCode})` : '';
      return `[Task ${e.data.index}/${e.data.total}] ✓ ${e.data.taskId} completed${checked}.`;
    }
    case 'task.failed':
      return `[Task ${e.data.index}/${e.data.total}] ✗ ${e.data.taskId} failed: ${e.data.error}`;
    case 'failure.classified':
      return `Task ${e.data.taskId} hit a failure (${e.data.class}): ${e.data.evidence}`;
    default:
      return undefined;
  }
}

function taskLine(t: PlanTask, i: number): string {
  const extra = [
    t.dependsOn.length ? `after ${t.dependsOn.join(', ')}` : '',
    t.tools ? `tools: ${t.tools.join(', ')}` : '',
    t.paths ? `paths: ${t.paths.join(', ')}` : '',
    t.check ? `check: ${t.check}` : '',
  ].filter(Boolean);
  return `${i + 1}. ${t.id}: ${t.title}${extra.length ? ` (${extra.join('; ')})` : ''}`;
}
