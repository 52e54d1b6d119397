import { stripEmphasis } from './answer-text';

/** One claim of a final answer: a sentence, a list item, a heading or a table row. */
export interface Claim {
  /** The claim's text (normalised, emphasis markers removed). */
  text: string;
  /**
   * `text` with inline code blanked out (same length, so positions agree): words in code are code,
   * not claims. A code span of plain words (`pass`, `all tests pass`) stays: it reads as those words.
   */
  prose: string;
}

/** Words after which a full stop does not end a sentence. */
const ABBREVIATIONS = new Set(['e.g', 'i.e', 'etc', 'vs', 'cf', 'approx', 'incl', 'resp', 'fig', 'no']);
const LIST_MARKER = /^\s{0,12}(?:[-*+]|\d{1,9}[.)])\s+/;
const HEADING = /^\s{0,3}#{1,6}\s+/;
const TABLE_ROW = /^\s{0,3}\|/;
const QUOTE = /^\s{0,3}(?:>\s?)+/;
const FENCE = /^\s{0,3}(```|~~~)/;
/** A fragment with nothing but citations and punctuation belongs to the claim before it ("It passes. (obs-4)"). */
function citationOnly(text: string): boolean {
  // Citations and joining words taken out, then one flat character class: linear on any input.
  const rest = text.replace(/\bobs-\d+\b/gi, '').replace(/\b(?:and|see|in)\b/gi, '');
  return rest.length < text.length && /^[\s()[\],;:.!?&-]*$/.test(rest) && /obs-\d/i.test(text);
}

/**
 * Splits a normalised answer into claims. Fenced code blocks are not claims; inline code is never
 * split (a `.` inside `a.b()` ends nothing); soft-wrapped lines join their paragraph or list item.
 * Stops after `limit` claims (the caller refuses an answer that reaches it).
 */
export function splitClaims(answer: string, limit: number): Claim[] {
  const claims: Claim[] = [];
  for (const block of blocks(answer)) {
    let inBlock = 0;
    for (const sentence of sentences(block)) {
      const text = stripEmphasis(sentence).trim();
      if (!/[\p{L}\p{N}]/u.test(text)) continue;
      const last = claims.at(-1);
      if (last && inBlock > 0 && citationOnly(text)) {
        last.text = `${last.text} ${text}`;
        last.prose = blankCode(last.text);
        continue;
      }
      claims.push({ text, prose: blankCode(text) });
      inBlock++;
      if (claims.length >= limit) return claims;
    }
  }
  return claims;
}

/** Paragraphs, list items, headings and table rows, with their markers taken off. */
function blocks(answer: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let fenced = false;
  const flush = () => {
    if (current.length) out.push(current.join(' '));
    current = [];
  };
  for (const raw of answer.split('\n')) {
    if (FENCE.test(raw)) {
      flush();
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const line = raw.replace(QUOTE, '');
    if (line.trim() === '') flush();
    else if (LIST_MARKER.test(line) || HEADING.test(line) || TABLE_ROW.test(line)) {
      flush();
      current.push(line.replace(LIST_MARKER, '').replace(HEADING, '').replace(/\|/g, ' | '));
      // A heading or a table row is complete on its line.
      if (!LIST_MARKER.test(line)) flush();
    } else current.push(line.trim());
  }
  flush();
  return out;
}

/**
 * Sentences of a block: a `.`, `!` or `?` ends one when whitespace follows and the next word does
 * not start in lower case (so "e.g. this" and "src/a.js" stay whole). Inside inline code nothing ends.
 */
function sentences(block: string): string[] {
  const mask = maskCode(block);
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < mask.length; i++) {
    const c = mask[i]!;
    if (c !== '.' && c !== '!' && c !== '?') continue;
    if (i + 1 < mask.length && !/\s/.test(mask[i + 1]!)) continue;
    const next = /\S/.exec(mask.slice(i + 1, i + 3 + 64));
    if (next && /\p{Ll}/u.test(next[0])) continue;
    if (c === '.' && ABBREVIATIONS.has(wordBefore(mask, i).toLowerCase())) continue;
    out.push(block.slice(start, i + 1));
    start = i + 1;
  }
  if (start < block.length) out.push(block.slice(start));
  return out;
}

/** The letters and dots just before `end`, at most 12 of them (abbreviations are short). */
function wordBefore(text: string, end: number): string {
  let i = end;
  while (i > 0 && end - i < 12 && /[\p{L}.]/u.test(text[i - 1]!)) i--;
  return text.slice(i, end);
}

/** Inline code spans (a run of backticks to the same run), contents replaced by `x`. */
function maskCode(text: string): string {
  return text.replace(
    /(`+)([^`][\s\S]*?)\1(?!`)/g,
    (_m, ticks: string, body: string) => `${ticks}${'x'.repeat(body.length)}${ticks}`,
  );
}

/**
 * Inline code blanked out with spaces, unless it is plain words: `all tests passed` in backticks
 * reads as those words (red-team finding: a claim put in a code span was not read at all). Code has
 * more than letters, digits, spaces and commas in it (`npm test -- --grep x`, `a.b()`).
 */
function blankCode(text: string): string {
  return text.replace(/(`+)([^`][\s\S]*?)\1(?!`)/g, (m, _ticks: string, body: string) =>
    /^[\p{L}\p{N}\s,!']*\p{L}[\p{L}\p{N}\s,!']*$/u.test(body) ? m.replace(/`/g, ' ') : ' '.repeat(m.length),
  );
}
