import { isEvent, type EventEnvelope, type PlanChanges } from '@gatehouse/shared';
import type { PlanAccount, TaskAccount } from '../events/plan-account';

/** An approver's changes to a plan, in words: `skip t5; order t1, t3, t2; t2 → "new title"`. */
export function changesText(c: PlanChanges | undefined): string {
  if (!c) return '';
  const parts: string[] = [];
  if (c.skip?.length) parts.push(`skip ${c.skip.join(', ')}`);
  if (c.order?.length) parts.push(`order ${c.order.join(', ')}`);
  for (const [id, title] of Object.entries(c.edit ?? {})) parts.push(`${id} → ${JSON.stringify(title)}`);
  return parts.join('; ');
}

/** `[Task 2/5] ✓ title: result`, `✗ title: error`, `skipped title`: the progress line of one task. */
export function taskLine(t: TaskAccount): string {
  const at = t.index > 0 ? `[Task ${t.index}/${t.total}]` : '[at the gate]';
  const tries = t.attempts > 1 ? ` (attempt ${t.attempts})` : '';
  switch (t.status) {
    case 'completed': {
      const check = t.check ? ` (check \`${t.check.command}\` exit ${String(t.check.exitCode)})` : '';
      return `${at} ✓ ${t.title}: ${t.result ?? ''}${check}${tries}`;
    }
    case 'failed':
      return `${at} ✗ ${t.title}: ${t.error ?? 'failed'}${tries}`;
    case 'skipped':
      return `${at} skipped ${t.title}`;
    case 'running':
      return `${at} … ${t.title} (not finished${tries ? `,${tries.slice(1, -1)}` : ''})`;
    default:
      return `${at} not started ${t.title}`;
  }
}

/** The plan of a run for `gatehouse show`: tasks and dependencies, the gate, each task's end, recovery, summary. */
export function planLines(a: PlanAccount): string[] {
  const out = [`plan ${a.planId} (${a.plans} plan(s) passed validation; ${a.proposed.length} tasks proposed):`];
  for (const t of a.proposed)
    out.push(`  ${t.id}  ${t.title}${t.dependsOn.length ? ` (depends on ${t.dependsOn.join(', ')})` : ''}`);
  for (const g of a.gate) {
    const who = g.by ? ` by ${g.by}` : '';
    const what = g.changes ? `: ${changesText(g.changes)}` : g.reason ? `: ${g.reason}` : '';
    out.push(`gate: ${g.status}${who}${what}`);
  }
  for (const t of a.tasks) out.push(taskLine(t));
  for (const d of a.deviations)
    out.push(`deviation: ${d.callId} ${d.tool}${d.taskId ? ` in ${d.taskId}` : ''} refused: ${d.message}`);
  for (const f of a.failures) out.push(`failure: ${f.taskId} classified ${f.class}: ${f.evidence}`);
  for (const r of a.recoveries)
    out.push(
      `recovery: ${r.taskId} ${r.recipe} (${r.class}) attempt ${r.attempt} of ${r.maxAttempts}: ${r.outcome}` +
        (r.delayMs ? ` after ${r.delayMs} ms` : ''),
    );
  for (const x of a.escalations)
    out.push(
      `escalation: ${x.taskId} (${x.class}) ${x.requestId ?? ''}: ` +
        `${x.decision ? `${x.decision}${x.by ? ` by ${x.by}` : ''}` : 'waiting for a decision'} — ${x.reason}`,
    );
  if (a.completed) out.push(`summary: ${a.completed.summary}${a.completed.aborted ? ' (aborted)' : ''}`);
  return out;
}

/** One line for a plan-mode event in the timeline, or undefined for any other event. */
export function planEventLine(e: EventEnvelope): string | undefined {
  if (isEvent(e, 'plan.created')) {
    const ids = e.data.tasks.map((t) => t.id).join(', ');
    return `${e.data.planId} v${e.data.version}: ${e.data.tasks.length} tasks (${ids})`;
  }
  if (isEvent(e, 'plan.gate')) {
    const d = e.data;
    const what = d.changes ? `: ${changesText(d.changes)}` : d.reason ? `: ${d.reason}` : '';
    return `${d.planId} ${d.status}${d.by ? ` by ${d.by}` : ''}${what}`;
  }
  if (isEvent(e, 'task.started'))
    return `[Task ${e.data.index}/${e.data.total}] ${e.data.taskId} ${e.data.title} (attempt ${e.data.attempt})`;
  if (isEvent(e, 'task.completed')) return `[Task ${e.data.index}/${e.data.total}] ✓ ${e.data.title}: ${e.data.result}`;
  if (isEvent(e, 'task.failed')) return `[Task ${e.data.index}/${e.data.total}] ✗ ${e.data.title}: ${e.data.error}`;
  if (isEvent(e, 'failure.classified')) return `${e.data.taskId} ${e.data.class}: ${e.data.evidence}`;
  if (isEvent(e, 'recovery.applied'))
    return `${e.data.taskId} ${e.data.recipe} attempt ${e.data.attempt} of ${e.data.maxAttempts}: ${e.data.outcome}`;
  if (isEvent(e, 'recovery.escalated'))
    return (
      `${e.data.taskId} ${e.data.status}${e.data.decision ? `: ${e.data.decision}` : ''}` +
      `${e.data.by ? ` by ${e.data.by}` : ''} — ${e.data.reason}`
    );
  if (isEvent(e, 'plan.completed')) return e.data.summary;
  return undefined;
}
