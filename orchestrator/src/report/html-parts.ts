import { cut } from './markdown-safe';
import { markup, type SafeHtml } from './html-escape';

/** Small pieces the HTML report's sections share. */

export function badge(text: string, tone: string): SafeHtml {
  return markup`<span class="badge ${tone}">${text}</span>`;
}

/** An event's time of day (UTC, to the millisecond), the full time on hover. */
export function clock(ts: string | null): SafeHtml | string {
  if (!ts) return '';
  const m = /T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/.exec(ts);
  return markup`<time datetime="${ts}" title="${ts}">${m ? m[1]! : ts}</time>`;
}

export const count = (n: number): string => n.toLocaleString('en-US');

export function money(usd: number | null): string {
  return usd === null ? 'unknown' : `$${usd.toFixed(4)}`;
}

/** Text shown whole up to here; a longer one is folded, and past FOLDED_MAX cut (the log keeps it whole). */
const OPEN_LINES = 12;
const OPEN_CHARS = 1500;
const FOLDED_MAX = 200_000;

function lineCount(text: string): number {
  return text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
}

/**
 * Untrusted text in a <pre>: shown when short, folded in a <details> (its summary says how long)
 * when long, and cut past FOLDED_MAX characters with a note.
 */
export function foldedText(text: string, label: string, kind: string): SafeHtml {
  const lines = lineCount(text);
  const c = cut(text, FOLDED_MAX);
  const note = c.cut
    ? markup`<p class="muted small">
        Cut at ${count(FOLDED_MAX)} of ${count(text.length)} characters; the run's log has it whole.
      </p>`
    : '';
  const pre = markup`<pre class="${kind}">${c.text}</pre>
    ${note}`;
  if (lines <= OPEN_LINES && text.length <= OPEN_CHARS)
    return text === '' ? markup`<span class="muted"> (empty)</span>` : pre;
  return markup`<details class="${kind}">
    <summary>${label}: ${count(lines)} lines</summary>
    ${pre}
  </details>`;
}

/** A list of untrusted strings as <code> items, or `none`. */
export function codeList(items: readonly string[], none = 'none'): SafeHtml {
  if (items.length === 0) return markup`<span class="muted">${none}</span>`;
  return markup`${items.map((x, i) => markup`${i ? ', ' : ''}<code>${x}</code>`)}`;
}
