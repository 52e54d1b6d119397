import { describe, expect, it } from 'vitest';
import { marked, type Token, type Tokens } from 'marked';
import { EVAL_MARKDOWN_MAX_CHARS, renderEvalMarkdown } from '../../src/eval/render-eval-markdown';
import { EVAL_FORMAT, EVAL_VERSION, summarise, type EvalReport, type EvalTaskResult } from '../../src/eval/eval-report';

/**
 * The eval's Markdown where everything a run's log or the suite file says is hostile, read back by
 * a GFM parser: the markup must be only the eval's own, and each task exactly one table row.
 */
const HOSTILE =
  '| x | <img src=x onerror=alert(1)> ``` `tick` [link](http://127.0.0.1/) @someone\n# heading \u001b[31mred\u202e';

function result(i: number, over: Partial<EvalTaskResult> = {}): EvalTaskResult {
  return {
    id: `t${i}`,
    passed: false,
    reason: HOSTILE,
    status: 'partial',
    stopReason: HOSTILE,
    decidedBy: HOSTILE,
    check: 'failed',
    turns: 3,
    toolCalls: 4,
    inputTokens: 1200,
    outputTokens: 34,
    cachedInputTokens: 0,
    costUsd: null,
    wallMs: 2100,
    runId: `run_${i}`,
    exitCode: 4,
    model: HOSTILE,
    error: null,
    ...over,
  };
}
function report(tasks: EvalTaskResult[]): EvalReport {
  return {
    format: EVAL_FORMAT,
    version: EVAL_VERSION,
    suite: { file: `/tmp/${HOSTILE}/suite.json`, name: HOSTILE },
    concurrency: 2,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:09.000Z',
    wallMs: 9000,
    tasks,
    ...summarise(tasks),
  };
}

/** Every token, with whether it is inside code; a table's cells are walked too. */
function walk(tokens: readonly Token[], visit: (t: Token, inCode: boolean) => void, inCode = false): void {
  for (const t of tokens) {
    visit(t, inCode);
    const code = inCode || t.type === 'code' || t.type === 'codespan';
    const inner = t as Token & { tokens?: Token[]; items?: Token[] };
    if (inner.tokens) walk(inner.tokens, visit, code);
    if (inner.items) walk(inner.items, visit, code);
    if (t.type === 'table') {
      const table = t as Tokens.Table;
      for (const c of [...table.header, ...table.rows.flat()]) walk(c.tokens, visit, code);
    }
  }
}

describe('the eval as Markdown', () => {
  it('keeps hostile text inside code: one row per task, no HTML, links or headings of its own', () => {
    const tasks = [
      result(0, { passed: true, reason: null, status: 'final', check: 'passed' }),
      result(1),
      result(2, { status: 'paused', reason: 'paused', decidedBy: null }),
      result(3, { status: 'error', reason: 'error', runId: null, error: `${HOSTILE}\n</details><script>x</script>` }),
    ];
    const md = renderEvalMarkdown(report(tasks));
    expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e\r]/);
    const tokens = marked.lexer(md, { gfm: true });
    const html: string[] = [];
    const forbidden: string[] = [];
    const headings: string[] = [];
    walk(tokens, (t, inCode) => {
      if (t.type === 'html') html.push(t.raw.trim());
      if (t.type === 'link' || t.type === 'image' || t.type === 'tag') forbidden.push(t.raw);
      // A heading's own words: its tokens outside code (the suite's name is one code span in it).
      if (t.type === 'heading')
        headings.push(
          (t as Tokens.Heading).tokens
            .map((x) => (x.type === 'codespan' ? 'X' : x.type === 'text' ? x.raw : '?'))
            .join(''),
        );
      if (t.type === 'text' && !inCode) expect(t.raw).not.toContain('onerror');
    });
    expect(forbidden).toEqual([]);
    for (const h of html) expect(h).toMatch(/^(<details><summary>[\w :,.-]+<\/summary>|<\/details>)$/);
    // The suite's name is cut at 100 characters (the ellipsis).
    expect(headings).toEqual(['❌ gatehouse eval X…: 1 of 4 passed (25 %)', 'Tasks that did not start']);
    const table = tokens.find((t): t is Tokens.Table => t.type === 'table');
    expect(table?.rows).toHaveLength(4);
    for (const row of table!.rows) expect(row).toHaveLength(10);
    // The cells read back as written: a hostile `|` did not split a cell.
    expect(table!.rows.map((r) => r[0]!.text)).toEqual(['`t0`', '`t1`', '`t2`', '`t3`']);
    expect(table!.rows[1]![2]!.text).toBe('`partial`');
    expect(table!.rows[0]![1]!.text).toBe('✅ passed');
    expect(table!.rows[2]![1]!.text).toMatch(/^⏸️ `paused`$/);
    expect(table!.rows[3]![9]!.text).toBe('—');
  });

  it('stays under the limit with thousands of tasks, saying how many did not fit', () => {
    const many = Array.from({ length: 3000 }, (_, i) => result(i, { error: HOSTILE.repeat(20) }));
    const md = renderEvalMarkdown(report(many));
    expect(md.length).toBeLessThan(EVAL_MARKDOWN_MAX_CHARS);
    expect(md).toMatch(/_\d+ more task\(s\) do not fit here/);
    expect(md).toContain('**Totals:** 9,000 turns, 12,000 tool calls, 3,600,000 input and 102,000 output tokens');
  });
});
