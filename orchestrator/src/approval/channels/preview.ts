import { canonicalJson } from '@gatehouse/shared';
import { planPreviewOf } from './plan-preview';

/**
 * What an approver reads before saying yes: the exact command, or what a file will look like.
 * It is shown, never parsed back; the approval itself is bound to the action hash, so a preview
 * can be cut for length without weakening what is approved.
 */
export function previewOf(tool: string, input: unknown): string {
  const fields = isRecord(input) ? input : {};
  if (tool === 'bash' && typeof fields.command === 'string') {
    // The whole command, uncut: a tail hidden from the approver is exactly where a bad step would go.
    return fields.command;
  }
  if (
    tool === 'edit_file' &&
    typeof fields.path === 'string' &&
    typeof fields.oldText === 'string' &&
    typeof fields.newText === 'string'
  ) {
    return editDiff(fields.path, fields.oldText, fields.newText);
  }
  if (tool === 'write_file' && typeof fields.path === 'string' && typeof fields.content === 'string') {
    return writePreview(fields.path, fields.content);
  }
  const plan = planPreviewOf(tool, input);
  if (plan !== undefined) return plan;
  return cut(json(input), MAX_JSON_CHARS);
}

const MAX_JSON_CHARS = 2_000;
const WRITE_PREVIEW_LINES = 40;
const MAX_DIFF_LINES = 400;
/** Above this many line pairs the LCS table costs too much; show the replacement whole instead. */
const MAX_LCS_CELLS = 4_000_000;

function editDiff(path: string, oldText: string, newText: string): string {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const body = lineDiff(a, b);
  // The edit replaces a snippet, not the whole file, so there are no file line numbers to give.
  const header = [`--- a/${path}`, `+++ b/${path}`, `@@ -${a.length} +${b.length} lines @@`];
  return [...header, ...capLines(body, MAX_DIFF_LINES)].join('\n');
}

function writePreview(path: string, content: string): string {
  const lines = splitLines(content);
  const shown = lines.slice(0, WRITE_PREVIEW_LINES).map((l) => `+${l}`);
  const more = lines.length - shown.length;
  const size = `${lines.length} line${lines.length === 1 ? '' : 's'}, ${Buffer.byteLength(content)} bytes`;
  return [
    `write_file ${path} (${size})`,
    `+++ b/${path}`,
    ...shown,
    ...(more > 0 ? [`… ${more} more line${more === 1 ? '' : 's'}`] : []),
  ].join('\n');
}

/** `a\nb\n` is two lines, not three: the trailing newline ends the last line. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** A plain LCS line diff: ` ` kept, `-` removed, `+` added. Snippets are small; big ones fall back. */
export function lineDiff(a: string[], b: string[]): string[] {
  // Common head and tail first: most edits touch a few lines in the middle of a snippet.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head = a.slice(0, start).map((l) => ` ${l}`);
  const tail = a.slice(endA).map((l) => ` ${l}`);
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > MAX_LCS_CELLS) {
    return [...head, ...midA.map((l) => `-${l}`), ...midB.map((l) => `+${l}`), ...tail];
  }
  const n = midA.length;
  const m = midB.length;
  // lcs[i][j]: length of the LCS of midA[i..] and midB[j..], in one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = midA[i] === midB[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const mid: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && midA[i] === midB[j]) {
      mid.push(` ${midA[i]}`);
      i++;
      j++;
    } else if (i < n && (j >= m || at(i + 1, j) >= at(i, j + 1))) {
      // Removals before additions, as `diff -u` prints a changed line.
      mid.push(`-${midA[i]}`);
      i++;
    } else {
      mid.push(`+${midB[j]}`);
      j++;
    }
  }
  return [...head, ...mid, ...tail];
}

function capLines(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max), `… ${lines.length - max} more diff lines`];
}

function json(input: unknown): string {
  try {
    return canonicalJson(input);
  } catch {
    // Not plain JSON (a class instance, NaN): still show something rather than nothing.
    try {
      return JSON.stringify(input) ?? String(input);
    } catch {
      return String(input);
    }
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
