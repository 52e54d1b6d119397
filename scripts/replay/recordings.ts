import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The recorded provider traffic (a folder outside the project: cases.json plus the files it names,
 * provenance in its SOURCES.md) and how each recording is put back on the wire. Nothing here is
 * copied into the project; the folder is read where it is.
 */
export interface RecordingCase {
  id: string;
  tier: string;
  provider: 'openai' | 'anthropic';
  model: string;
  file: string;
  /** `sse`: the body as sent; `jsonl`: one data payload a line (framed here); `json`: an error body. */
  format: 'sse' | 'jsonl' | 'json';
  /** For a jsonl file holding several Anthropic responses back to back: which one to serve. */
  segment?: number;
  status?: number;
  headers?: Record<string, string>;
  expect?: { errorKind?: string; exit?: number };
  covers?: string;
}

export interface ServedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads `cases.json`; a malformed entry is an error that names it, not a case silently skipped. */
export function loadCases(dir: string): RecordingCase[] {
  const file = path.join(dir, 'cases.json');
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { cases?: unknown };
  if (!Array.isArray(parsed.cases)) throw new Error(`${file} has no "cases" array`);
  return parsed.cases.map((raw, i) => {
    const c = raw as Partial<RecordingCase>;
    const where = `${file}: cases[${i}]`;
    if (typeof c.id !== 'string' || typeof c.file !== 'string') throw new Error(`${where} needs "id" and "file"`);
    if (c.provider !== 'openai' && c.provider !== 'anthropic')
      throw new Error(`${where} (${c.id}): provider must be "openai" or "anthropic"`);
    if (c.format !== 'sse' && c.format !== 'jsonl' && c.format !== 'json')
      throw new Error(`${where} (${c.id}): format must be "sse", "jsonl" or "json"`);
    return c as RecordingCase;
  });
}

/** The HTTP response a recording stands for, framed as the API sends it. */
export function servedResponse(dir: string, c: RecordingCase): ServedResponse {
  const text = readFileSync(path.join(dir, c.file), 'utf8');
  if (c.format === 'json') {
    return { status: c.status ?? 200, headers: { 'content-type': 'application/json', ...c.headers }, body: text };
  }
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...c.headers };
  if (c.format === 'sse') return { status: c.status ?? 200, headers, body: terminated(text) };
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (c.provider === 'openai') {
    return { status: 200, headers, body: lines.map((l) => `data: ${l}\n\n`).join('') + 'data: [DONE]\n\n' };
  }
  const segment = c.segment === undefined ? lines : anthropicSegments(lines)[c.segment];
  if (!segment) throw new Error(`${c.id}: ${c.file} has no response number ${c.segment}`);
  const framed = segment.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`);
  return { status: 200, headers, body: framed.join('') };
}

/**
 * Some saved bodies lost the blank line that ends the last event (trailing newlines stripped when
 * saved); the API always sends it, and an SSE client drops an unterminated event, so it is restored.
 */
function terminated(text: string): string {
  if (/(\r?\n){2}$/.test(text)) return text;
  return text.endsWith('\n') ? `${text}\n` : `${text}\n\n`;
}

/** One Anthropic response per message_start. */
function anthropicSegments(lines: string[]): string[][] {
  const segments: string[][] = [];
  for (const line of lines) {
    if ((JSON.parse(line) as { type?: string }).type === 'message_start' || segments.length === 0) segments.push([]);
    segments.at(-1)!.push(line);
  }
  return segments;
}
