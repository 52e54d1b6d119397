import type { RecordingCase, ServedResponse } from './recordings';

/**
 * What a recording holds, read plainly from its bytes: the oracle the providers' parse is compared
 * with. It follows the wire format's documented meaning (choice 0, tool calls by index, content
 * blocks by index) and gatehouse's stop-reason vocabulary; it shares no code with the providers.
 */
export type Expected =
  | {
      kind: 'done';
      text: string;
      toolCalls: ExpectedCall[];
      stopReason: string;
      /** The server never said why it stopped: the provider must say the reason was inferred. */
      inferred: boolean;
      usage: { inputTokens: number; outputTokens: number };
    }
  | { kind: 'error'; errorKind: string }
  /** Neither an end marker nor an error: a cut connection, which the provider must not accept. */
  | { kind: 'incomplete' };

export interface ExpectedCall {
  id: string;
  name: string;
  input: unknown;
  truncated?: true;
}

export function expectedOutcome(c: RecordingCase, served: ServedResponse): Expected {
  if (c.expect?.errorKind !== undefined) return { kind: 'error', errorKind: c.expect.errorKind };
  const events = sseEvents(served.body);
  return c.provider === 'openai' ? readChatCompletions(events) : readMessages(events);
}

interface SseEvent {
  event: string | null;
  data: string;
}

function sseEvents(body: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of body.replace(/\r\n?/g, '\n').split('\n\n')) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    if (data.length > 0) out.push({ event, data: data.join('\n') });
  }
  return out;
}

function readChatCompletions(events: SseEvent[]): Expected {
  let text = '';
  let finish: string | null = null;
  let done = false;
  const usage = { inputTokens: 0, outputTokens: 0 };
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for (const e of events) {
    if (e.data.startsWith('[DONE]')) {
      done = true;
      continue;
    }
    const chunk = JSON.parse(e.data) as ChatChunk;
    if (chunk.error !== undefined) return { kind: 'error', errorKind: 'unexpected error in a stream' };
    if (chunk.usage) usage.inputTokens = chunk.usage.prompt_tokens;
    if (chunk.usage) usage.outputTokens = chunk.usage.completion_tokens;
    const choice = chunk.choices?.find((ch) => ch.index === 0);
    if (!choice) continue;
    text += (choice.delta?.content ?? '') + (choice.delta?.refusal ?? '');
    for (const part of choice.delta?.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: '', name: '', args: '' };
      call.id = part.id || call.id;
      call.name = part.function?.name || call.name;
      call.args += part.function?.arguments ?? '';
      calls.set(part.index, call);
    }
    finish ??= choice.finish_reason ?? null;
  }
  if (finish === null && !done) return { kind: 'incomplete' };
  const ordered = [...calls.entries()].sort(([a], [b]) => a - b);
  const toolCalls = ordered.map(([index, call], i): ExpectedCall => {
    const id = call.id || `call_${index}`;
    const input = parsedArgs(call.args);
    const cut = finish === 'length' && i === ordered.length - 1 && (input === undefined || call.args.trim() === '');
    if (cut) return { id, name: call.name, input: call.args, truncated: true };
    return { id, name: call.name, input: input === undefined ? call.args : input };
  });
  const stopReason =
    finish === 'tool_calls' || finish === 'function_call'
      ? 'tool_use'
      : finish === 'length'
        ? 'max_tokens'
        : finish === 'stop' || finish === null
          ? toolCalls.length > 0
            ? 'tool_use'
            : 'end_turn'
          : 'other';
  return { kind: 'done', text, toolCalls, stopReason, inferred: finish === null, usage };
}

function readMessages(events: SseEvent[]): Expected {
  let text = '';
  let stop: string | null = null;
  let finished = false;
  const usage = { inputTokens: 0, outputTokens: 0 };
  const open = new Map<number, { kind: 'text' } | { kind: 'tool'; id: string; name: string; json: string }>();
  const toolCalls: ExpectedCall[] = [];
  for (const e of events) {
    const m = JSON.parse(e.data) as MessagesEvent;
    if (m.type === 'error') return { kind: 'error', errorKind: 'unexpected error in a stream' };
    if (m.type === 'message_start' || m.type === 'message_delta') {
      const u = m.type === 'message_start' ? m.message?.usage : m.usage;
      if (typeof u?.input_tokens === 'number')
        usage.inputTokens = u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
      if (typeof u?.output_tokens === 'number') usage.outputTokens = u.output_tokens;
      stop = m.delta?.stop_reason ?? stop;
    } else if (m.type === 'content_block_start' && m.index !== undefined) {
      const b = m.content_block;
      if (b?.type === 'text') {
        open.set(m.index, { kind: 'text' });
        text += b.text ?? '';
      } else if (b?.type === 'tool_use') open.set(m.index, { kind: 'tool', id: b.id!, name: b.name!, json: '' });
    } else if (m.type === 'content_block_delta' && m.index !== undefined) {
      const block = open.get(m.index);
      if (block?.kind === 'text' && m.delta?.type === 'text_delta') text += m.delta.text ?? '';
      if (block?.kind === 'tool' && m.delta?.type === 'input_json_delta') block.json += m.delta.partial_json ?? '';
    } else if (m.type === 'content_block_stop' && m.index !== undefined) {
      const block = open.get(m.index);
      if (block?.kind === 'tool') {
        const input = block.json === '' ? {} : parsedArgs(block.json);
        toolCalls.push({ id: block.id, name: block.name, input: input === undefined ? block.json : input });
      }
      open.delete(m.index);
    } else if (m.type === 'message_stop') finished = true;
  }
  if (!finished) return { kind: 'incomplete' };
  // A tool_use block with no content_block_stop was cut off by the output limit.
  for (const [, block] of [...open.entries()].sort(([a], [b]) => a - b)) {
    if (block.kind === 'tool') toolCalls.push({ id: block.id, name: block.name, input: block.json, truncated: true });
  }
  const stopReason =
    stop === 'tool_use'
      ? 'tool_use'
      : stop === 'end_turn' || stop === 'stop_sequence'
        ? 'end_turn'
        : stop === 'max_tokens' || stop === 'model_context_window_exceeded'
          ? 'max_tokens'
          : 'other';
  return { kind: 'done', text, toolCalls, stopReason, inferred: false, usage };
}

function parsedArgs(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

interface ChatChunk {
  error?: unknown;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  choices?: Array<{
    index: number;
    finish_reason?: string | null;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
  }>;
}

interface MessagesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

interface MessagesEvent {
  type: string;
  index?: number;
  message?: { usage?: MessagesUsage };
  usage?: MessagesUsage;
  content_block?: { type: string; text?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
}
