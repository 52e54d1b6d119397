import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDir } from '../../src/events/paths';
import { buildReport } from '../../src/report/build-report';
import { escapeHtml, markup, SafeHtml } from '../../src/report/html-escape';
import { REPORT_CSS } from '../../src/report/html-style';
import { renderHtml, REPORT_CSP } from '../../src/report/render-html';
import { renderMarkdown } from '../../src/report/render-markdown';
import { RunReport } from '../../src/report/report-schema';
import { tempStateDir } from '../events/helpers';
import { CHILD, HTML_HOSTILE, HTML_HOSTILE_TEXT, PLAIN, ROOT, writeRun } from './report-harness';

/** Every element tag in a page: our renderer writes lowercase tags only. */
function tagsOf(page: string): Set<string> {
  return new Set([...page.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => m[1]!.toLowerCase()));
}

describe('html-escape', () => {
  it('escapes the five HTML characters and shows control and bidi characters as escapes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(escapeHtml('a\u202eb\u0000c\rd\u001b[31m\u200be')).toBe('a\\u{202e}b\\u{0}c\\u{d}d\\u{1b}[31m\\u{200b}e');
    // Newlines and tabs stay: <pre> shows them.
    expect(escapeHtml('a\n\tb')).toBe('a\n\tb');
  });

  it('escapes every value put into a template, and inserts only what the same tag built', () => {
    const hostile = '</pre><script>x()</script>';
    const inner = markup`<code>${hostile}</code>`;
    expect(inner).toBeInstanceOf(SafeHtml);
    expect(markup`<pre>${hostile}</pre>`.value).toBe('<pre>&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;</pre>');
    expect(markup`<p>${inner}</p>`.value).toBe('<p><code>&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;</code></p>');
    expect(markup`${[hostile, inner, 3, null, undefined, false]}`.value).toBe(
      '&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;<code>&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;</code>3',
    );
    // A string that looks like markup, even one produced by another tag's .value, is text.
    expect(markup`${inner.value}`.value).toBe(escapeHtml(inner.value));
    expect(markup`<a title="${'" onclick="x()'}">`.value).toBe('<a title="&quot; onclick=&quot;x()">');
  });
});

describe('the HTML report of a hostile run', () => {
  const state = tempStateDir();
  writeRun(state, HTML_HOSTILE_TEXT);
  const report = buildReport(state, ROOT);
  const page = renderHtml(report);

  it("holds only the report's own elements: no script, no handler, no URL but its own anchors", () => {
    const allowed = ['!doctype', 'a', 'body', 'br', 'code', 'dd', 'details', 'div', 'dl', 'dt', 'footer', 'h1', 'h2'];
    allowed.push('h3', 'h4', 'head', 'header', 'html', 'input', 'label', 'li', 'main', 'meta', 'nav', 'ol', 'p');
    allowed.push('pre', 'section', 'span', 'strong', 'style', 'summary', 'table', 'tbody', 'td', 'th', 'thead');
    allowed.push('time', 'title', 'tr', 'ul');
    expect([...tagsOf(page)].filter((t) => !allowed.includes(t))).toEqual([]);
    expect(page).not.toMatch(/<script|<img|<svg|<iframe|<!--|<a href="javascript/i);
    // Inside a tag (text has no raw `<`): no event handler attribute.
    expect(page).not.toMatch(/<[^>]*\son[a-z]+=/i);
    const hrefs = [...page.matchAll(/\shref="([^"]*)"/g)].map((m) => m[1]);
    for (const h of hrefs) expect(h).toMatch(/^#(agent-\d+|answer|lineage|approvals|changes|usage|verify|timeline)$/);
    expect(page).not.toMatch(/<[^>]*\s(src|srcset|action|formaction|background|poster)=/i);
    // No raw control or bidi character is left to reorder what a reviewer reads.
    expect(page).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/);
    // Exactly one <style> and one </style>: the page's own.
    expect(page.match(/<\/?style/g)).toEqual(['<style', '</style']);
    expect(page.match(/<\/?title/g)).toEqual(['<title', '</title']);
  });

  it('shows the hostile text, escaped, wherever the run put it', () => {
    const shown = escapeHtml(HTML_HOSTILE);
    expect(page).toContain(shown); // the task, the answer, reasons
    expect(page).toContain(escapeHtml('<b>mallory</b>" onclick="window.__pwned=8'));
    expect(page).toContain('&lt;!-- an open comment');
    expect(page).toContain('\\u{202e}gnp.exe');
  });

  it('carries a Content-Security-Policy that forbids every load and allows exactly its own style sheet', () => {
    const hash = createHash('sha256').update(REPORT_CSS).digest('base64');
    const head = page.slice(0, page.indexOf('<title>'));
    expect(head).toContain(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(REPORT_CSP)}">`);
    expect(REPORT_CSP).toMatch(/^default-src 'none';/);
    expect(REPORT_CSP).toContain(`style-src 'sha256-${hash}'`);
    for (const d of ['script-src', 'img-src', 'font-src', 'connect-src', 'frame-src', 'base-uri', 'form-action'])
      expect(REPORT_CSP).toContain(`${d} 'none'`);
    expect(page).toContain(`<style>${REPORT_CSS}</style>`);
    // The meta comes before anything the run wrote.
    expect(page.indexOf('Content-Security-Policy')).toBeLessThan(page.indexOf('gatehouse run'));
  });

  it('folds the long diff and long observations in <details>, closed', () => {
    expect(page).toMatch(/<details class="diff">\s*<summary>Diff: [\d,]+\+? lines<\/summary>/);
    expect(page).toMatch(/<details class="observation">\s*<summary>obs-1 · failed: [\d,]+ lines<\/summary>/);
  });
});

describe('the HTML report: structure', () => {
  it('has every section, the lineage with the handoff, and every call of every agent with its phases', () => {
    const state = tempStateDir();
    writeRun(state, PLAIN);
    const page = renderHtml(buildReport(state, ROOT));
    for (const id of ['answer', 'lineage', 'approvals', 'changes', 'usage', 'verify', 'timeline', 'agent-0', 'agent-1'])
      expect(page).toContain(`id="${id}"`);
    expect(page.match(/<li class="call /g)).toHaveLength(10); // 9 of the root, 1 of the child
    // A denied call: stopped at the decision, by the rule, never run.
    const call4 = page.slice(
      page.indexOf('<li class="call stopped" data-call="call_4"'),
      page.indexOf('data-call="call_5"'),
    );
    expect(call4).not.toBe('');
    expect(call4).toMatch(/data-phase="decision">[\s\S]*badge bad">deny<\/span> by rule <code>deny-rm<\/code>/);
    expect(call4).toContain('none (denied by deny-rm)');
    expect(call4).toContain('did not run');
    // A granted one: who, how, the scope.
    const call5 = page.slice(page.indexOf('data-call="call_5"'), page.indexOf('data-call="call_6"'));
    expect(call5).toMatch(/badge ok">granted<\/span> by <strong>alice<\/strong> via cli, scope <code>once<\/code>/);
    expect(call5).toContain('alice via cli (once)');
    expect(call5).not.toContain('user:alice');
    // The delegate call links to its sub-agent's section; the lineage shows what it was handed.
    expect(page).toMatch(
      /data-call="call_8"[\s\S]*ran as a sub-agent: <a href="#agent-1" class="mono">run_report_child<\/a>/,
    );
    expect(page).toMatch(/tools <code>list_files<\/code>; paths <code>\*\*<\/code>; budget 3 turns, 3 tool calls/);
    expect(page).toContain('<span class="bad">withheld (outside its paths)</span> <code>outside.txt</code>');
    expect(page).toMatch(/badge ok">intact<\/span>\s*<span class="muted">the worst verdict of the tree's 2 log\(s\)/);
  });

  it("reports a log that fails verify, in verify's own words", () => {
    const state = tempStateDir();
    writeRun(state, PLAIN);
    appendFileSync(path.join(runDir(state, CHILD), 'events.jsonl'), '{"torn":');
    const r = buildReport(state, ROOT);
    const child = r.agents.children[0]!;
    expect(child.verify.verdict).toBe('failed');
    expect(child.verify.firstBad?.meaning).toContain('the last write did not complete');
    expect(r.agents.verify.verdict).toBe('intact');
    const page = renderHtml(r);
    expect(page).toMatch(/badge bad">failed<\/span>\s*<span class="muted">the worst verdict/);
    expect(page).toContain('the last write did not complete');
  });

  it('audits no log when asked not to (Markdown and eval show no verdict), and says so', () => {
    const state = tempStateDir();
    writeRun(state, PLAIN);
    appendFileSync(path.join(runDir(state, CHILD), 'events.jsonl'), '{"torn":');
    const r = buildReport(state, ROOT, { verify: false });
    for (const a of [r.agents, r.agents.children[0]!]) {
      expect(a.verify).toMatchObject({ verdict: 'not_checked', checks: [], firstBad: null });
      expect(a.verify.problems).toEqual(['not checked: this report does not show verify']);
    }
    expect(renderMarkdown(r)).toBe(renderMarkdown(buildReport(state, ROOT)));
  });
});

describe('the JSON report, version 2', () => {
  it('gives every agent its calls phase by phase, its handoff, usage and verify; the Markdown is unchanged', () => {
    const state = tempStateDir();
    writeRun(state, PLAIN);
    const r = RunReport.parse(JSON.parse(JSON.stringify(buildReport(state, ROOT))));
    expect(r.version).toBe(2);
    const calls = new Map(r.agents.calls.map((c) => [c.callId, c]));
    expect([...calls.keys()]).toEqual([
      'call_1',
      'call_2',
      'call_3',
      'call_4',
      'call_5',
      'call_6',
      'call_7',
      'call_8',
      'check_1',
    ]);
    expect(calls.get('call_1')).toMatchObject({
      turn: 1,
      tool: 'bash',
      actor: 'model',
      input: { command: 'npm test' },
      validation: { ok: true, stage: 'semantic', errors: [] },
      decision: { decision: 'allow', rule: 'builtin:allow-tests' },
      approval: null,
      authorisedBy: 'builtin:allow-tests',
      execution: { executor: 'sandbox', primitive: 'exec', status: 'ok', exitCode: 1, durationMs: 12 },
      observation: { observationId: 'obs-1', outcome: 'failed', content: PLAIN.output },
    });
    expect(calls.get('call_6')!.approval).toMatchObject({ requestId: 'req_2', status: 'denied', approver: 'bob' });
    expect(calls.get('call_6')!.approval!.answeredAt).not.toBeNull();
    expect(calls.get('call_7')!.validation).toMatchObject({ ok: false, stage: 'known' });
    expect(calls.get('call_8')!.childRunId).toBe(CHILD);
    expect(calls.get('check_1')!.actor).toBe('runtime');
    expect(r.approvals[0]!.requestedAt).toMatch(/^\d{4}-/);
    const child = r.agents.children[0]!;
    expect(child.handoff).toMatchObject({ callId: 'call_8', tools: ['list_files'], paths: ['**'] });
    expect(child.completion).toMatchObject({ status: 'final', withheld: ['outside.txt'] });
    expect(r.agents.handoff).toBeNull();
    expect(r.agents.verify).toMatchObject({ verdict: 'intact', firstBad: null });
    expect(r.agents.verify.checks[0]).toMatch(/^chain: intact, \d+ events verified$/);
    expect(r.agents.usage).toEqual(r.usage);
    // The Markdown report reads only what it read before.
    expect(renderMarkdown(r)).toBe(renderMarkdown(buildReport(state, ROOT)));
  });
});
