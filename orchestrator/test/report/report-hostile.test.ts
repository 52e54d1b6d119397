import { describe, expect, it } from 'vitest';
import { marked, type Token } from 'marked';
import { MARKDOWN_MAX_CHARS } from '../../src/report/render-markdown';
import { codeSpan, fencedBlock } from '../../src/report/markdown-safe';
import { HOSTILE, hostileMarkdown } from './report-harness';

/**
 * The Markdown report of a run whose every model- or repository-controlled string is hostile, read
 * back by a real GFM parser (marked, with GitHub's extensions on): the markup that comes out must
 * be only the report's own.
 */

function walk(tokens: readonly Token[], visit: (t: Token, inCode: boolean) => void, inCode = false): void {
  for (const t of tokens) {
    visit(t, inCode);
    const inner = t as Token & { tokens?: Token[]; items?: Token[] };
    const code = inCode || t.type === 'code' || t.type === 'codespan';
    if (inner.tokens) walk(inner.tokens, visit, code);
    if (inner.items) walk(inner.items, visit, code);
  }
}

describe('the Markdown report of a hostile run', () => {
  it('stays under the comment limit and keeps every hostile string inside code', () => {
    const md = hostileMarkdown();
    expect(md.length).toBeLessThan(MARKDOWN_MAX_CHARS);
    expect(md.length).toBeLessThan(65_536);
    // No terminal control, bidi override or carriage return survives: they are shown as escapes.
    expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e\r]/);
    expect(md).toContain('\\u{1b}[31mred');

    const tokens = marked.lexer(md, { gfm: true });
    const html: string[] = [];
    const forbidden: string[] = [];
    const headings: string[] = [];
    const prose: string[] = [];
    const code: string[] = [];
    walk(tokens, (t, inCode) => {
      if (t.type === 'html') html.push(t.raw.trim());
      if (t.type === 'link' || t.type === 'image' || t.type === 'tag') forbidden.push(t.raw);
      if (t.type === 'heading') headings.push((t as Token & { text: string }).text);
      if (t.type === 'code' || t.type === 'codespan') code.push((t as Token & { text: string }).text);
      // A leaf of text outside code (a list item's text token holds its inline tokens instead).
      else if (t.type === 'text' && !inCode && !(t as Token & { tokens?: Token[] }).tokens) prose.push(t.raw);
    });
    expect(forbidden).toEqual([]);
    // The only HTML is the report's own folding.
    for (const h of html) expect(h).toMatch(/^(<details><summary>[\w :,.+]+<\/summary>|<\/details>)$/);
    expect(html.filter((h) => h === '</details>')).toHaveLength(2);
    expect(headings.map((h) => h.replace(/`[^`]*`/g, 'ID'))).toEqual([
      '✅ gatehouse run ID: final',
      'Answer',
      'Check',
      'Sent back to the model',
      'Files changed (1)',
      'Commands (5)',
      'Approvals',
      'Denied or refused',
      'Tokens and cost',
      'Sub-agents',
    ]);
    // No text outside code could mention anyone.
    for (const p of prose) expect(p).not.toMatch(/(^|[^\w`])@[a-z0-9]/i);
    // The hostile text is all there, as code: nothing was dropped to make it safe.
    for (const piece of ['<script>window.__pwned = 1</script>', '@org/team', '[click](javascript:', '</details>'])
      expect(code.some((c) => c.includes(piece))).toBe(true);

    // The diff is a `diff` block between a <details> and its </details>, cut with a note.
    const top = tokens.filter((t) => t.type !== 'space');
    const diffAt = top.findIndex((t) => t.type === 'code' && (t as Token & { lang: string }).lang === 'diff');
    expect(top[diffAt - 1]).toMatchObject({ type: 'html' });
    expect(top[diffAt - 1]!.raw).toMatch(/^<details><summary>Diff: /);
    expect(
      top
        .slice(diffAt)
        .find((t) => t.type === 'html')!
        .raw.trim(),
    ).toBe('</details>');
    expect(md).toMatch(
      /_The diff is cut \([\d,]+ bytes in all\); the whole diff is `runs\/run_report_root\/changes\.diff`/,
    );
    expect(md).toContain('_The answer is cut at 5,700 characters;');
  });
});

describe('markdown-safe', () => {
  it('a code span is fenced longer than any backtick run in it, padded where a backtick is at its edge', () => {
    expect(codeSpan('a ``` b')).toBe('````a ``` b````');
    expect(codeSpan('`x`')).toBe('`` `x` ``');
    expect(codeSpan('')).toBe('`  `');
    expect(codeSpan('line\nnext\ttab')).toBe('`line\\nnext tab`');
    expect(codeSpan('x'.repeat(10), 4)).toBe('`xxxx`…');
    for (const s of ['`', '``x', HOSTILE]) {
      const [t] = marked.lexer(`x ${codeSpan(s, 10_000)}`, { gfm: true }) as unknown as [Token & { tokens: Token[] }];
      expect(t.tokens.map((x) => x.type)).toEqual(['text', 'codespan']);
    }
  });

  it('a fenced block outlasts the longest backtick run, and a cut keeps whole lines', () => {
    const b = fencedBlock('````\n``````````\nend', 'text', 1000);
    expect(b.markdown.startsWith('```````````text\n')).toBe(true);
    expect(marked.lexer(b.markdown).map((t) => t.type)).toEqual(['code']);
    const cut = fencedBlock('one\ntwo\nthree', 'text', 9);
    expect(cut).toEqual({ markdown: '```text\none\ntwo\n```', cut: true });
    expect(fencedBlock('one\ntwo\nthree', 'text', 6).markdown).toBe('```text\none\n```');
    // A cut that falls on a line end keeps the whole line either side.
    expect(fencedBlock('one\ntwo\nthree', 'text', 7).markdown).toBe('```text\none\ntwo\n```');
    expect(fencedBlock('one\ntwo\nthree', 'text', 9, 'tail').markdown).toBe('```text\ntwo\nthree\n```');
    expect(fencedBlock('one\ntwo\nthree', 'text', 8, 'tail').markdown).toBe('```text\nthree\n```');
    // A surrogate pair is never split by a cut.
    expect(fencedBlock('a😀', 'text', 2).markdown).toBe('```text\na\n```');
  });
});
