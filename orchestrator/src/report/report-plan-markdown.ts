import type { ReportPlan } from './report-plan-schema';
import { codeSpan } from './markdown-safe';
import { boundedList } from './report-sections';

const MARK = { completed: '✓', failed: '✗', skipped: 'skipped', running: '… not finished', pending: 'not started' };

/**
 * The Markdown report's plan section: the gate's decision and changes, each task's end as
 * `[Task 2/5] ✓ title: result`, escalations, deviations, failures and recoveries, the summary. Titles, results,
 * reasons and the summary are the model's or an approver's text: each goes inside a code span.
 */
export function planSection(p: ReportPlan, max: number, jsonHint: string): string {
  const gate = p.gate.map((g) => {
    const c = g.changes;
    const changes = c
      ? [
          c.skip.length ? `skip ${c.skip.map((id) => codeSpan(id, 40)).join(', ')}` : '',
          c.order.length ? `order ${c.order.map((id) => codeSpan(id, 40)).join(', ')}` : '',
          ...Object.entries(c.edit).map(([id, title]) => `${codeSpan(id, 40)} renamed ${codeSpan(title, 200)}`),
        ]
          .filter(Boolean)
          .join('; ')
      : '';
    return (
      `- gate ${g.status}${g.by ? ` by ${codeSpan(g.by, 100)}` : ''}${changes ? `: ${changes}` : ''}` +
      `${g.reason ? `: ${codeSpan(g.reason, 300)}` : ''}`
    );
  });
  const tasks = p.tasks.map((t) => {
    const at = t.index > 0 ? `[Task ${t.index}/${t.total}]` : '[at the gate]';
    const detail =
      t.status === 'completed' && t.result !== null
        ? `: ${codeSpan(t.result, 300)}`
        : t.status === 'failed' && t.error !== null
          ? `: ${codeSpan(t.error, 300)}`
          : '';
    const check = t.check ? ` (check ${codeSpan(t.check.command, 200)} exit ${String(t.check.exitCode)})` : '';
    return `- ${at} ${MARK[t.status]} ${codeSpan(t.id, 40)} ${codeSpan(t.title, 200)}${detail}${check}`;
  });
  // A person's decisions first: when the list is bounded, what is cut is what they were asked about (the
  // failures and recoveries, in the JSON), never the decisions themselves.
  const recovery = [
    ...p.escalations.map(
      (x) =>
        `- escalation of ${codeSpan(x.taskId, 40)} (${x.class}): ` +
        `${x.decision ? `**${x.decision}**${x.by ? ` by ${codeSpan(x.by, 100)}` : ''}` : 'waiting for a decision'}; ` +
        `${codeSpan(x.reason, 300)}`,
    ),
    ...p.deviations.map(
      (d) =>
        `- deviation refused: ${codeSpan(d.tool, 40)} in ${codeSpan(d.taskId ?? '?', 40)}: ${codeSpan(d.message, 300)}`,
    ),
    ...p.failures.map(
      (f) => `- failure of ${codeSpan(f.taskId, 40)} classified **${f.class}**: ${codeSpan(f.evidence, 300)}`,
    ),
    ...p.recoveries.map(
      (r) =>
        `- recovery of ${codeSpan(r.taskId, 40)}: ${codeSpan(r.recipe, 80)} ` +
        `attempt ${r.attempt} of ${r.maxAttempts}, ${r.outcome}`,
    ),
  ];
  const summary =
    p.summary !== null
      ? `**Summary:** ${codeSpan(p.summary, 500)}${p.aborted ? ' (aborted)' : ''}`
      : '_The plan has not ended._';
  const where = `${jsonHint} has the whole plan`;
  return [
    summary,
    boundedList(gate, Math.floor(max / 6), where),
    boundedList(tasks, Math.floor(max / 2), where),
    recovery.length ? boundedList(recovery, Math.floor(max / 4), where) : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}
