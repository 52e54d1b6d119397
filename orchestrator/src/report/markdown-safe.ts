import { visible } from '../approval/channels/screen';

/**
 * Putting text the model or the repository wrote into Markdown that GitHub renders (a pull-request
 * comment, a step summary) without letting it become markup. Such text only ever goes inside a code
 * span or a fenced code block whose fence is longer than any backtick run in it, so nothing in it is
 * parsed: no HTML, no images, no links or autolinks, no mentions (GitHub links `@name` only outside
 * code), and it cannot close the block or a `<details>` around it. Control and bidi characters are
 * shown as escapes (they could hide or reorder what a reviewer reads). The caller never starts a line
 * with a code span: a run of three backticks there would open a fenced block instead.
 */

/** Carriage returns count as line ends in Markdown: one line end, "\n", before anything else. */
function normalise(text: string): string {
  return visible(text.replace(/\r\n?/g, '\n'));
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/**
 * At most `max` UTF-16 units of `text`, from its start (or, with `tail`, its end), never with half a
 * surrogate pair at the cut.
 */
export function cut(text: string, max: number, keep: 'head' | 'tail' = 'head'): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const n = Math.max(0, max);
  if (keep === 'tail') {
    let start = text.length - n;
    const first = text.charCodeAt(start);
    if (first >= 0xdc00 && first <= 0xdfff) start += 1;
    return { text: text.slice(start), cut: true };
  }
  let end = n;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), cut: true };
}

/**
 * One line of untrusted text as an inline code span, at most `max` characters of it (an ellipsis
 * after the span says it was cut). Newlines and tabs are shown as `\n` and a space.
 */
export function codeSpan(text: string, max = 200): string {
  const one = normalise(text).replace(/\n/g, '\\n').replace(/\t/g, ' ');
  const c = cut(one, max);
  const fence = '`'.repeat(longestBacktickRun(c.text) + 1);
  // Spaces inside the fence are stripped by the renderer; they keep a backtick at an edge from joining it.
  const pad = c.text.startsWith('`') || c.text.endsWith('`') || c.text === '' ? ' ' : '';
  return `${fence}${pad}${c.text}${pad}${fence}${c.cut ? '…' : ''}`;
}

/**
 * Untrusted text as a fenced code block (`info` is ours: `text`, `diff`), at most `max` characters
 * of it. `cut` says whether it was cut; the caller says so, and where the whole is.
 */
export function fencedBlock(
  text: string,
  info: string,
  max: number,
  keep: 'head' | 'tail' = 'head',
): { markdown: string; cut: boolean } {
  const whole = normalise(text);
  const c = cut(whole, max, keep);
  // A cut keeps whole lines where it can, so a diff's last line is not half a line.
  let body = c.text;
  if (c.cut && keep === 'head' && whole[body.length] !== '\n' && body.includes('\n'))
    body = body.slice(0, body.lastIndexOf('\n'));
  if (c.cut && keep === 'tail' && whole[whole.length - body.length - 1] !== '\n' && body.includes('\n'))
    body = body.slice(body.indexOf('\n') + 1);
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(body) + 1));
  return { markdown: `${fence}${info}\n${body.replace(/\n$/, '')}\n${fence}`, cut: c.cut };
}

/**
 * A `<details>` block folded by default around Markdown we produced: `summary` is our own text
 * (counts, fixed words) and is HTML-escaped all the same.
 */
export function details(summary: string, inner: string): string {
  return `<details><summary>${escapeHtml(summary)}</summary>\n\n${inner}\n\n</details>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
