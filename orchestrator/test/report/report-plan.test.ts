import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/report/render-html';
import { renderMarkdown } from '../../src/report/render-markdown';
import { RunReport } from '../../src/report/report-schema';
import { planRunReport } from './report-plan-harness';

/**
 * The plan section of the reports, from the v6 fixture's plan run (test/fixtures/logs/plan-run.ts):
 * its task t4's title is markup (bold, an image with a handler, a javascript: link, a table pipe),
 * which each format must carry as text.
 */
const INJECTED = 'Note the fix in **NOTES.md** <img src=x onerror=alert(1)> | [docs](javascript:alert(1))';
const report = planRunReport;

describe('the report of a plan run', () => {
  it('JSON: the plan with each task, the gate and its changes, recovery, the summary (and it parses)', () => {
    const r = report();
    expect(RunReport.safeParse(r).success).toBe(true);
    expect(r.plan!.tasks.map((t) => `${t.index}/${t.total} ${t.id} ${t.status}`)).toEqual([
      '1/4 t1 completed',
      '2/4 t3 completed',
      '3/4 t2 skipped',
      '4/4 t4 skipped',
      '0/4 t5 skipped',
    ]);
    expect(r.plan!.gate.at(-1)).toMatchObject({
      status: 'modified',
      changes: { skip: ['t5'], order: ['t1', 't3', 't2', 't4'] },
    });
    expect(r.plan!.failures).toEqual([expect.objectContaining({ taskId: 't2', class: 'unknown' })]);
    expect(r.plan!.escalations).toEqual([expect.objectContaining({ taskId: 't2', decision: 'skip' })]);
    expect(r.plan!.summary).toMatch(/^2\/4 tasks completed\. 0 failures\./);
    // The escalation request is in the approvals, as a request of tool `escalation`, not as a call.
    expect(r.approvals.map((a) => `${a.tool} ${a.callId} ${a.status}`)).toContain('escalation esc_t2_1 granted');
  });

  it('Markdown: `[Task i/n] ✓`, the gate, the escalation, and a title with markup only as a code span', () => {
    const md = renderMarkdown(report());
    expect(md).toContain('### Plan (5 tasks)');
    expect(md).toMatch(
      /- \[Task 1\/4\] ✓ `t1` `Fix add\(\) in src\/math\.js to return a \+ b`: `add\(\) returns a \+ b/,
    );
    expect(md).toContain('gate modified by `fixture-reviewer`: skip `t5`; order `t1`, `t3`, `t2`, `t4`');
    expect(md).toContain('escalation of `t2` (unknown): **skip** by `fixture-reviewer`');
    expect(md).toContain(`\`${INJECTED}\``);
    // Outside code spans, nothing of the title is left to be parsed as markup.
    const outside = md.replace(/`[^`\n]*`/g, '');
    expect(outside).not.toContain('<img');
    expect(outside).not.toContain('javascript:');
    expect(outside).not.toContain('**NOTES.md**');
  });

  it('HTML: the plan section, the title escaped', () => {
    const html = renderHtml(report());
    expect(html).toContain('<section id="plan">');
    expect(html).toContain('[Task 1/4]');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toMatch(/href="javascript:/);
  });
});
