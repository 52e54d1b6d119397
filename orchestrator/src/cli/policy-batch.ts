import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { isClosedPipeError } from './closed-output';
import { policyChecker, PolicyCheckUsageError, type McpCallFacts, type PolicyCheckOptions } from './policy';

/**
 * `gatehouse policy check --batch FILE|-`: one JSON call per line in (`{"tool": ..., "input": ...}`,
 * optionally `"id"`), one line out per call, in order: the same decision JSON as a single check,
 * plus `line` (and `id` when given); or `{"line", "error"}` for a line that is not a call. Blank
 * lines are skipped. Input is streamed, output is written with backpressure, and a reader that goes
 * away (`| head`) ends the batch quietly.
 *
 * Exit: 0 every line decided, 1 some lines were not calls (each has its error line), 2 usage (bad
 * flags, an unreadable FILE, a bad policy file: nothing was decided).
 */

/** One line is at most this long: a longer one is reported, not parsed. */
export const MAX_LINE_CHARS = 1 << 20;
/** Output is written in chunks of about this size (one write per decision would dominate the cost). */
const CHUNK_CHARS = 64 * 1024;

const KEYS = new Set(['tool', 'input', 'id', 'annotations', 'inputSchema']);

type BatchCall = { tool: string; input: unknown; id?: string | number; mcp: McpCallFacts };

function parseCall(text: string): BatchCall | string {
  if (text.length > MAX_LINE_CHARS) return `the line is ${text.length} characters; at most ${MAX_LINE_CHARS} are read`;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return `not JSON: ${(e as Error).message}`;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return 'expected an object {"tool": NAME, "input": {...}}';
  }
  const o = raw as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !KEYS.has(k));
  if (extra.length) {
    const keys = extra.map((k) => JSON.stringify(k)).join(', ');
    return `unknown key(s) ${keys}: a line has "tool", "input" and optionally "id", "annotations", "inputSchema"`;
  }
  if (typeof o.tool !== 'string') return '"tool" is missing or not a string';
  if (!('input' in o)) return '"input" is missing';
  if (o.id !== undefined && typeof o.id !== 'string' && typeof o.id !== 'number') {
    return '"id" must be a string or a number';
  }
  const mcp: McpCallFacts = {
    ...(o.annotations !== undefined ? { annotations: o.annotations } : {}),
    ...(o.inputSchema !== undefined ? { inputSchema: o.inputSchema } : {}),
  };
  return { tool: o.tool, input: o.input, ...(o.id !== undefined ? { id: o.id } : {}), mcp };
}

/** Buffered writes that wait for 'drain', and notice a reader that went away (EPIPE) instead of crashing. */
class Output {
  #buf = '';
  closed = false;
  constructor(readonly out: Writable) {
    out.on('error', (e: NodeJS.ErrnoException) => {
      if (!isClosedPipeError(e)) throw e;
      this.closed = true;
    });
  }

  async line(s: string): Promise<void> {
    this.#buf += `${s}\n`;
    if (this.#buf.length >= CHUNK_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.closed || this.#buf === '') return;
    const chunk = this.#buf;
    this.#buf = '';
    if (!this.out.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.out.off('drain', done);
          this.out.off('error', done);
          this.out.off('close', done);
          resolve();
        };
        this.out.on('drain', done).on('error', done).on('close', done);
      });
    }
  }
}

function openInput(batch: string, stdin: Readable): Readable {
  if (batch === '-') return stdin;
  try {
    if (statSync(batch).isDirectory()) {
      throw new PolicyCheckUsageError(`--batch ${batch} is a directory; give a file of JSON lines, or - for stdin`);
    }
  } catch (e) {
    if (e instanceof PolicyCheckUsageError) throw e;
    throw new PolicyCheckUsageError(`--batch ${batch}: ${(e as Error).message}`);
  }
  return createReadStream(batch, { encoding: 'utf8' });
}

export async function policyCheckBatch(
  o: PolicyCheckOptions & { batch: string },
  io: { stdin: Readable; stdout: Writable } = { stdin: process.stdin, stdout: process.stdout },
): Promise<number> {
  const checker = await policyChecker(o); // a bad policy file stops here: nothing is read
  const input = openInput(o.batch, io.stdin);
  const out = new Output(io.stdout);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let bad = 0;
  try {
    for await (const text of lines) {
      lineNo++;
      if (out.closed) break;
      if (text.trim() === '') continue;
      const call = parseCall(text);
      let result: Record<string, unknown>;
      if (typeof call === 'string') result = { line: lineNo, error: call };
      else {
        const r = checker.decide(call.tool, call.input, call.mcp);
        const where = { line: lineNo, ...(call.id !== undefined ? { id: call.id } : {}) };
        result = r.ok ? { ...where, ...r.json } : { ...where, error: r.error };
      }
      if (typeof call === 'string' || 'error' in result) bad++;
      await out.line(JSON.stringify(result));
    }
    await out.flush();
  } finally {
    lines.close();
    if (input !== io.stdin) input.destroy();
  }
  if (bad > 0 && !out.closed) {
    const what = `${bad} of ${lineNo} line(s) were not calls`;
    process.stderr.write(`gatehouse policy check: ${what}; each has an "error" line in the output\n`);
  }
  return bad > 0 ? 1 : 0;
}
