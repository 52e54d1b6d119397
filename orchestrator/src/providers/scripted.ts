import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ScriptError } from './errors';
import type { ModelEvent, ModelProvider, ModelRequest, ModelToolCall, Usage } from './types';

/**
 * The scripted model: a public, versionless contract (tests, demos and reproducible runs depend on
 * it), so it is strict: an unknown key is a typo that would otherwise silently change a run.
 *
 *   { "turns": [ { "text": "…", "toolCalls": [ { "name": "read_file", "input": { "path": "a" } } ] },
 *                { "final": "…" } ],
 *     "children": [ <scripts of the same shape> ] }
 *
 * Each model call consumes the next turn. Tool call ids are `call_<turn>_<i>`, both 0-based like
 * the JSON path (`turns[<turn>].toolCalls[<i>]`), so a log line points straight at its entry.
 */
const ScriptToolCall = z.strictObject({
  name: z.string().min(1, 'a tool call needs a "name"'),
  input: z.unknown().optional(),
});

const ScriptTurn = z
  .strictObject({
    text: z.string().optional(),
    toolCalls: z.array(ScriptToolCall).optional(),
    final: z.string().optional(),
  })
  .refine((t) => t.text !== undefined || t.toolCalls !== undefined || t.final !== undefined, {
    message: 'a turn needs "text", "toolCalls" or "final"',
  })
  .refine((t) => t.final === undefined || (t.text === undefined && t.toolCalls === undefined), {
    message: '"final" is the whole answer: it cannot be combined with "text" or "toolCalls"',
  });

export type ScriptTurn = z.infer<typeof ScriptTurn>;
export interface Script {
  turns: ScriptTurn[];
  /** Scripts for sub-agents, validated here and consumed by delegation. */
  children?: Script[] | undefined;
}

export const ScriptSchema: z.ZodType<Script> = z.lazy(() =>
  z.strictObject({
    turns: z.array(ScriptTurn),
    children: z.array(ScriptSchema).optional(),
  }),
);

/** Validates a parsed script; `source` names it in the error. */
export function parseScript(value: unknown, source: string): Script {
  const result = ScriptSchema.safeParse(value);
  if (result.success) return result.data;
  const lines = result.error.issues.slice(0, 5).map((issue) => {
    const at = jsonPath(issue.path);
    const entry = entryAt(value, issue.path);
    return `  at ${at}: ${issue.message}${entry ? ` (entry: ${entry})` : ''}`;
  });
  const more = result.error.issues.length > 5 ? `\n  …and ${result.error.issues.length - 5} more` : '';
  throw new ScriptError(
    source,
    `Invalid model script ${source}:\n${lines.join('\n')}${more}\nExpected {"turns": [{"text"?, "toolCalls"?: ` +
      `[{"name", "input"}], "final"?}], "children"?: [scripts]}.`,
  );
}

/** Reads and validates a script file once, at creation: streaming never touches the file system. */
export function loadScript(file: string, cwd: string = process.cwd()): Script {
  const full = path.resolve(cwd, file);
  let raw: string;
  try {
    raw = readFileSync(full, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new ScriptError(
        full,
        `Model script not found: ${full}. Check the path in scripted:PATH (relative paths start at ${cwd}).`,
      );
    throw new ScriptError(
      full,
      `Cannot read model script ${full}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new ScriptError(
      full,
      `Model script ${full} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return parseScript(value, full);
}

export class ScriptedProvider implements ModelProvider {
  readonly id: string;
  readonly script: Script;
  #next = 0;

  constructor(script: Script, id = 'scripted:inline') {
    this.script = script;
    this.id = id;
  }

  /** How many turns `stream()` has consumed so far. */
  get turnsConsumed(): number {
    return this.#next;
  }

  #nextChild = 0;

  /**
   * A child's script: the next one, or the one at `index` (resume: the n-th child this run
   * started). A script without one gives a script that is exhausted at once.
   */
  forChild(at?: number): ModelProvider {
    const index = at ?? this.#nextChild;
    this.#nextChild = index + 1;
    const child = this.script.children?.[index];
    return new ScriptedProvider(child ?? { turns: [] }, `${this.id}#children[${index}]`);
  }

  resumeAfter(turnsDone: number): void {
    this.#next = Math.max(0, Math.min(turnsDone, this.script.turns.length));
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent, void, undefined> {
    if (request.signal?.aborted) {
      yield { type: 'error', kind: 'cancelled', message: 'The model request was cancelled.', retryable: false };
      return;
    }
    const index = this.#next;
    const turn = this.script.turns[index];
    if (!turn) {
      // The loop maps this exact message to the stop reason `script_exhausted`.
      yield { type: 'error', kind: 'script', message: 'script_exhausted', retryable: false };
      return;
    }
    this.#next++;

    if (turn.final !== undefined) {
      if (turn.final !== '') yield { type: 'text_delta', text: turn.final };
      yield {
        type: 'done',
        text: turn.final,
        toolCalls: [],
        usage: usage(request, turn.final, []),
        stopReason: 'end_turn',
      };
      return;
    }
    const text = turn.text ?? '';
    if (text !== '') yield { type: 'text_delta', text };
    const toolCalls: ModelToolCall[] = (turn.toolCalls ?? []).map((call, i) => ({
      id: `call_${index}_${i}`,
      name: call.name,
      input: call.input ?? {},
    }));
    for (const call of toolCalls) yield { type: 'tool_call', call };
    yield {
      type: 'done',
      text,
      toolCalls,
      usage: usage(request, text, toolCalls),
      stopReason: toolCalls.length > 0 ? 'tool_use' : 'end_turn',
    };
  }
}

/** Deterministic stand-in for token counts: characters / 4, rounded up. */
function usage(request: ModelRequest, text: string, calls: ModelToolCall[]): Usage {
  let input = request.system.length;
  for (const m of request.messages) {
    if (m.role === 'user' || m.role === 'tool') input += m.content.length;
    else
      input +=
        m.text.length + m.toolCalls.reduce((n, c) => n + c.name.length + JSON.stringify(c.input ?? {}).length, 0);
  }
  const output = text.length + calls.reduce((n, c) => n + c.name.length + JSON.stringify(c.input).length, 0);
  return { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(output / 4) };
}

/** `$.turns[2].toolCalls[0].name`, the path a person finds in their file. */
function jsonPath(parts: readonly PropertyKey[]): string {
  return parts.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : `${acc}.${String(p)}`), '$');
}

/** The offending entry, short: the nearest object or array at or above the path. */
function entryAt(root: unknown, parts: readonly PropertyKey[]): string | undefined {
  let node: unknown = root;
  let found: unknown = undefined;
  for (const p of parts) {
    if (typeof node !== 'object' || node === null) break;
    node = (node as Record<PropertyKey, unknown>)[p];
    if (typeof node === 'object' && node !== null) found = node;
    else break;
  }
  if (found === undefined) return undefined;
  const text = JSON.stringify(found);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
