import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../src/report/render-html';
import { renderMarkdown } from '../../src/report/render-markdown';
import { RunReport } from '../../src/report/report-schema';
import { planRunReport } from './report-plan-harness';

/**
 * The plan section of the reports, from the v6 fixture's plan run (made by `gatehouse plan`,
 * test/fixtures/logs/generate.mjs): its task t4's title is markup (bold, an image with a handler, a
 * javascript: link, a table pipe), which each format must carry as text.
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
    // t2's check failed twice (logic): fed back once, then escalated; the person skipped it.
    expect(r.plan!.failures).toEqual([
      expect.objectContaining({ taskId: 't2', class: 'logic' }),
      expect.objectContaining({ taskId: 't2', class: 'logic' }),
    ]);
    expect(r.plan!.escalations).toEqual([expect.objectContaining({ taskId: 't2', decision: 'skip' })]);
    expect(r.plan!.summary).toBe('2/5 tasks completed. 0 failures. Skipped: t5, t2, t4.');
    // The escalation request is in the approvals, as a request of tool `escalation`, not as a call.
    expect(r.approvals.map((a) => `${a.tool} ${a.callId} ${a.status}`)).toContain('escalation esc_t2_1 granted');
  });

  it('Markdown: `[Task i/n] ✓`, the gate, the escalation, and a title with markup only as a code span', () => {
    const r = report();
    const md = renderMarkdown(r);
    // `gatehouse plan approve|decide --on-behalf-of fixture-reviewer` records the account that answered, for her.
    const by = r.plan!.gate.at(-1)!.by!;
    expect(by).toMatch(/^user:.+ for fixture-reviewer$/);
    expect(md).toContain('### Plan (5 tasks)');
    expect(md).toMatch(
      /- \[Task 1\/4\] ✓ `t1` `Fix add\(\) in src\/math\.js to return a \+ b`: `add\(\) returns a \+ b/,
    );
    expect(md).toContain(`gate modified by \`${by}\`: skip \`t5\`; order \`t1\`, \`t3\`, \`t2\`, \`t4\``);
    expect(md).toContain(`escalation of \`t2\` (logic): **skip** by \`${by}\``);
    // That recovery list is longer than its share of the report: what is cut is in the JSON, never the decision.
    expect(md).toMatch(/- … and \d+ more \(`gatehouse report \S+ --format json` has the whole plan\)/);
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
