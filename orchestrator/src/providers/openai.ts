import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { IncompleteStreamError, type ProviderLabel } from './failure';
import { sdkStream } from './sdk-stream';
import { DoneMarkerWatch } from './done-marker';
import { argumentsJson, toolCallFromJson, truncatedToolCall } from './tool-args';
import {
  DEFAULT_RETRY,
  type ModelEvent,
  type ModelProvider,
  type ModelRequest,
  type ModelStopReason,
  type ModelToolCall,
  type RetryPolicy,
  type Usage,
} from './types';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIProviderOptions {
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible endpoint (vLLM, Ollama, a proxy); include the `/v1`. */
  baseUrl?: string;
  retry?: RetryPolicy;
  fetch?: typeof fetch;
  /** Per attempt, until response headers arrive (the SDK does not time the streamed body). */
  timeoutMs?: number;
  organization?: string | null;
  project?: string | null;
  /** OpenAI wants `max_completion_tokens`; some compatible servers only know the older `max_tokens`. */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
}

/** OpenAI Chat Completions, streamed. Turns chunks into model events; never executes anything. */
export class OpenAIProvider implements ModelProvider {
  readonly id: string;
  readonly #client: OpenAI;
  readonly #options: OpenAIProviderOptions;
  readonly #label: ProviderLabel;
  readonly #watch: DoneMarkerWatch;

  constructor(options: OpenAIProviderOptions) {
    this.#options = options;
    this.id = `openai:${options.model}`;
    const baseURL = options.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
    this.#watch = new DoneMarkerWatch(options.fetch);
    this.#client = new OpenAI({
      apiKey: options.apiKey,
      baseURL,
      // Passed explicitly so the SDK does not pick them up from process.env behind our back.
      organization: options.organization ?? null,
      project: options.project ?? null,
      maxRetries: 0,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      fetch: this.#watch.fetch,
    });
    this.#label = {
      name: baseURL === OPENAI_DEFAULT_BASE_URL ? 'OpenAI' : 'OpenAI-compatible server',
      keyVariable: 'OPENAI_API_KEY',
      baseUrlVariable: 'OPENAI_BASE_URL',
      baseUrl: baseURL,
      model: options.model,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    };
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent, void, undefined> {
    const body = toChatRequest(this.#options.model, request, this.#options.maxTokensField);
    yield* sdkStream('OpenAI', this.#options.retry ?? DEFAULT_RETRY, request.signal, OpenAI, this.#label, () =>
      this.#attempt(body, request.signal),
    );
  }

  async *#attempt(
    body: ChatCompletionCreateParamsStreaming,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelEvent, void, undefined> {
    const { data: stream, response } = await this.#client.chat.completions
      .create(body, signal ? { signal } : {})
      .withResponse();
    const pending = new Map<number, { id: string; name: string; args: string }>();
    const toolCalls: ModelToolCall[] = [];
    let text = '';
    let finish: string | null = null;
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };

    for await (const chunk of stream) {
      if (chunk.usage) usage = usageOf(chunk.usage);
      // Typed as always present, but a compatible server may leave out choices or an empty delta;
      // a missing field must not become a crash.
      const choice = (chunk.choices ?? []).find((c) => c.index === 0);
      if (!choice) continue;
      const delta: Partial<typeof choice.delta> = choice.delta ?? {};
      // A refusal is the model's answer too; the loop should see it as text.
      const piece = (delta.content ?? '') + (delta.refusal ?? '');
      if (piece !== '') {
        text += piece;
        yield { type: 'text_delta', text: piece };
      }
      for (const part of delta.tool_calls ?? []) {
        const call = pending.get(part.index) ?? { id: '', name: '', args: '' };
        if (part.id) call.id = part.id;
        // Replaced, not appended, as the SDK's own accumulator does: some servers repeat the name.
        if (part.function?.name) call.name = part.function.name;
        if (part.function?.arguments) call.args += part.function.arguments;
        pending.set(part.index, call);
      }
      if (choice.finish_reason && finish === null) {
        finish = choice.finish_reason;
        // Calls are complete only at finish_reason: compatible servers may interleave their chunks.
        for (const call of finishCalls(pending, finish === 'length')) {
          toolCalls.push(call);
          yield { type: 'tool_call', call };
        }
      }
    }
    // The SDK ends an aborted stream silently, and so does a connection a proxy cut short.
    if (signal?.aborted) throw new IncompleteStreamError('cancelled');
    if (finish !== null) {
      yield { type: 'done', text, toolCalls, usage, stopReason: stopReason(finish, toolCalls.length) };
      return;
    }
    // No finish_reason: only the body's own `[DONE]` line says the reply is whole. Without it the
    // connection dropped (retryable); with it the server simply never said why it stopped.
    if (!this.#watch.sawDone(response)) throw new IncompleteStreamError('neither a finish_reason nor [DONE]');
    // [DONE] after nothing at all is not a reply whose stop reason can be inferred: taken as an
    // end_turn it would be an empty final answer. Not retried either: the server did answer (and bill).
    if (text === '' && pending.size === 0) {
      yield {
        type: 'error',
        kind: 'server',
        retryable: false,
        message:
          `${this.#label.name} at ${this.#label.baseUrl} ended the stream with [DONE] after no text, no tool call ` +
          'and no finish_reason: check the server and the model name.',
      };
      return;
    }
    const limit = body.max_completion_tokens ?? body.max_tokens;
    const atLimit = typeof limit === 'number' && usage.outputTokens >= limit;
    for (const call of finishCalls(pending, atLimit)) {
      toolCalls.push(call);
      yield { type: 'tool_call', call };
    }
    const inferred = atLimit ? 'max_tokens' : toolCalls.length > 0 ? 'tool_use' : 'end_turn';
    const why = atLimit
      ? `the output used all ${limit} tokens allowed`
      : toolCalls.length > 0
        ? 'the reply holds tool calls'
        : 'the reply holds no tool calls';
    yield {
      type: 'done',
      text,
      toolCalls,
      usage,
      stopReason: inferred,
      stopNote: `the server ended the stream with [DONE] but sent no finish_reason; ${inferred} was inferred (${why})`,
    };
  }
}

/**
 * The calls of a finished reply, in index order. When the output limit stopped the reply, the last
 * call is the one it was writing: unless its arguments are already whole JSON, it was cut off.
 */
function finishCalls(
  pending: ReadonlyMap<number, { id: string; name: string; args: string }>,
  cutOff: boolean,
): ModelToolCall[] {
  const ordered = [...pending.entries()].sort(([a], [b]) => a - b);
  return ordered.map(([index, call], position) => {
    const id = call.id || `call_${index}`;
    const parsed = toolCallFromJson(id, call.name, call.args);
    const last = position === ordered.length - 1;
    return cutOff && last && (parsed.parseError !== undefined || call.args.trim() === '')
      ? truncatedToolCall(id, call.name, call.args)
      : parsed;
  });
}

export function toChatRequest(
  model: string,
  request: ModelRequest,
  maxTokensField: 'max_completion_tokens' | 'max_tokens' = 'max_completion_tokens',
): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) {
    switch (message.role) {
      case 'user':
        messages.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        messages.push({
          role: 'assistant',
          // The API wants null, not '', beside tool calls.
          content: message.text === '' && message.toolCalls.length > 0 ? null : message.text,
          ...(message.toolCalls.length > 0
            ? {
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: argumentsJson(call) },
                })),
              }
            : {}),
        });
        break;
      case 'tool':
        // Chat Completions has no error flag on tool results: the content itself must say it failed.
        messages.push({ role: 'tool', tool_call_id: message.callId, content: message.content });
        break;
    }
  }
  const tools: ChatCompletionTool[] = request.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: schemaObject(tool.inputSchema) },
  }));
  return {
    model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    // An empty tools array is a 400 on OpenAI.
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.maxOutputTokens !== undefined ? { [maxTokensField]: request.maxOutputTokens } : {}),
  };
}

function stopReason(finish: string, toolCallCount: number): ModelStopReason {
  switch (finish) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'stop':
      // Some compatible servers report 'stop' after emitting tool calls.
      return toolCallCount > 0 ? 'tool_use' : 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'filtered';
    default:
      return 'other';
  }
}

function schemaObject(schema: unknown): Record<string, unknown> {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema)
    ? (schema as Record<string, unknown>)
    : { type: 'object', properties: {} };
}

/**
 * prompt_tokens counts every input token, cached ones included; the cached ones are in
 * prompt_tokens_details.cached_tokens (absent on older models and many compatible servers).
 */
function usageOf(u: {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens;
  return {
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    ...(typeof cached === 'number' && cached > 0 ? { cachedInputTokens: cached } : {}),
  };
}
