import type { ReportPlan } from './report-plan-schema';
import { markup, type SafeHtml } from './html-escape';
import { badge } from './html-parts';

const TASK_TONE = { completed: 'ok', failed: 'bad', skipped: 'warn', running: 'warn', pending: 'muted' } as const;
const MARK = { completed: '✓', failed: '✗', skipped: 'skipped', running: '…', pending: 'not started' } as const;

/**
 * The HTML report's plan section: the gate, each task's end, failures, recoveries, escalations and
 * the summary. Every string goes through `markup`, which escapes it: titles are the model's text.
 */
export function planHtml(p: ReportPlan): SafeHtml {
  const gate = p.gate.map((g) => {
    const c = g.changes;
    const changes = c
      ? [
          c.skip.length ? `skip ${c.skip.join(', ')}` : '',
          c.order.length ? `order ${c.order.join(', ')}` : '',
          ...Object.entries(c.edit).map(([id, title]) => `${id} → ${title}`),
        ]
          .filter(Boolean)
          .join('; ')
      : '';
    return markup`<li>
      gate <strong>${g.status}</strong>${g.by ? markup` by ${g.by}` : ''}${changes ? markup`: ${changes}` : ''}${
        g.reason ? markup`: ${g.reason}` : ''
      }
    </li>`;
  });
  const tasks = p.tasks.map(
    (t) => markup`<tr class="task">
      <td class="mono">${t.index > 0 ? `[Task ${t.index}/${t.total}]` : '[at the gate]'}</td>
      <td>${badge(MARK[t.status], TASK_TONE[t.status])}</td>
      <td><code>${t.id}</code> ${t.title}</td>
      <td>${t.result ?? t.error ?? ''}${
        t.check
          ? markup` <span class="small muted"
              >(check <code>${t.check.command}</code> exit ${String(t.check.exitCode)})</span
            >`
          : ''
      }</td>
    </tr>`,
  );
  const recovery = [
    ...p.deviations.map(
      (d) => markup`<li>deviation refused: <code>${d.tool}</code> in ${d.taskId ?? '?'}: ${d.message}</li>`,
    ),
    ...p.failures.map(
      (f) => markup`<li>failure of ${f.taskId} classified <strong>${f.class}</strong>: ${f.evidence}</li>`,
    ),
    ...p.recoveries.map(
      (r) =>
        markup`<li>
          recovery of ${r.taskId}: <code>${r.recipe}</code> attempt ${r.attempt} of ${r.maxAttempts}, ${r.outcome}
        </li>`,
    ),
    ...p.escalations.map(
      (x) => markup`<li>
        escalation of ${x.taskId} (${x.class}):
        ${decisionHtml(x)};
        ${x.reason}
      </li>`,
    ),
  ];
  return markup`<p>${p.summary !== null ? markup`<strong>${p.summary}</strong>` : 'The plan has not ended.'}${
    p.aborted ? ' (aborted)' : ''
  }</p>
    <ul class="gate">
      ${gate}
    </ul>
    <table class="plan">
      <thead>
        <tr>
          <th>task</th>
          <th>end</th>
          <th>title</th>
          <th>result</th>
        </tr>
      </thead>
      <tbody>
        ${tasks}
      </tbody>
    </table>
    ${recovery.length ? markup`<ul class="recovery">${recovery}</ul>` : ''}`;
}

function decisionHtml(x: ReportPlan['escalations'][number]): SafeHtml | string {
  if (!x.decision) return 'waiting for a decision';
  return markup`<strong>${x.decision}</strong>${x.by ? markup` by ${x.by}` : ''}`;
}
