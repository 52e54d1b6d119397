import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import { IncompleteStreamError, type ProviderLabel } from './failure';
import { sdkStream } from './sdk-stream';
import { toolCallFromJson, truncatedToolCall } from './tool-args';
import {
  DEFAULT_RETRY,
  type ModelEvent,
  type ModelProvider,
  type ModelRequest,
  type ModelStopReason,
  type ModelToolCall,
  type RetryPolicy,
} from './types';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** The Messages API requires max_tokens; this is the ceiling when the loop does not set one. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicProviderOptions {
  model: string;
  apiKey: string;
  /** Without the `/v1`: the SDK appends `/v1/messages`. */
  baseUrl?: string;
  retry?: RetryPolicy;
  fetch?: typeof fetch;
  /** Per attempt, until response headers arrive (the SDK does not time the streamed body). */
  timeoutMs?: number;
  maxTokens?: number;
}

type OpenBlock = { kind: 'text' } | { kind: 'tool_use'; id: string; name: string; json: string; initial: unknown };

/** Anthropic Messages, streamed as raw SSE events. Turns them into model events; never executes anything. */
export class AnthropicProvider implements ModelProvider {
  readonly id: string;
  readonly #client: Anthropic;
  readonly #options: AnthropicProviderOptions;
  readonly #label: ProviderLabel;

  constructor(options: AnthropicProviderOptions) {
    this.#options = options;
    this.id = `anthropic:${options.model}`;
    const baseURL = options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL;
    this.#client = new Anthropic({
      apiKey: options.apiKey,
      baseURL,
      maxRetries: 0,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.#label = {
      name: 'Anthropic',
      keyVariable: 'ANTHROPIC_API_KEY',
      baseUrlVariable: 'ANTHROPIC_BASE_URL',
      baseUrl: baseURL,
      model: options.model,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    };
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent, void, undefined> {
    const body = toMessagesRequest(
      this.#options.model,
      request,
      this.#options.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    );
    yield* sdkStream('Anthropic', this.#options.retry ?? DEFAULT_RETRY, request.signal, Anthropic, this.#label, () =>
      this.#attempt(body, request.signal),
    );
  }

  async *#attempt(
    body: MessageCreateParamsStreaming,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelEvent, void, undefined> {
    const stream = await this.#client.messages.create(body, signal ? { signal } : {});
    const blocks = new Map<number, OpenBlock>();
    const toolCalls: ModelToolCall[] = [];
    let text = '';
    let stop: string | null = null;
    let finished = false;
    let prompt: PromptTokens = { inputTokens: 0 };
    // The last block begun, and for a tool_use block closed, where its call is and the JSON it had.
    let tail: { kind: string; position?: number; json?: string } | undefined;
    let outputTokens = 0;

    for await (const event of stream) {
      switch (event.type) {
        case 'message_start': {
          const u = event.message.usage;
          prompt = promptTokens(u) ?? prompt;
          outputTokens = u.output_tokens ?? outputTokens;
          break;
        }
        case 'content_block_start': {
          const block = event.content_block;
          tail = { kind: block.type };
          if (block.type === 'text') {
            blocks.set(event.index, { kind: 'text' });
            if (block.text !== '') {
              text += block.text;
              yield { type: 'text_delta', text: block.text };
            }
          } else if (block.type === 'tool_use') {
            blocks.set(event.index, {
              kind: 'tool_use',
              id: block.id,
              name: block.name,
              json: '',
              initial: block.input,
            });
          }
          // Thinking and server-tool blocks are not part of the harness's vocabulary: ignored.
          break;
        }
        case 'content_block_delta': {
          const open = blocks.get(event.index);
          if (event.delta.type === 'text_delta' && open?.kind === 'text') {
            text += event.delta.text;
            yield { type: 'text_delta', text: event.delta.text };
          } else if (event.delta.type === 'input_json_delta' && open?.kind === 'tool_use') {
            open.json += event.delta.partial_json;
          }
          break;
        }
        case 'content_block_stop': {
          const open = blocks.get(event.index);
          if (open?.kind === 'tool_use') {
            // A tool without parameters streams no JSON at all; its input is the start block's.
            const call =
              open.json === ''
                ? { id: open.id, name: open.name, input: open.initial ?? {} }
                : toolCallFromJson(open.id, open.name, open.json);
            toolCalls.push(call);
            if (tail?.kind === 'tool_use') tail = { kind: 'tool_use', position: toolCalls.length - 1, json: open.json };
            yield { type: 'tool_call', call };
          }
          blocks.delete(event.index);
          break;
        }
        case 'message_delta': {
          stop = event.delta.stop_reason ?? stop;
          const u = event.usage;
          // output_tokens here is cumulative; input_tokens is repeated by newer API versions only.
          outputTokens = u.output_tokens ?? outputTokens;
          prompt = promptTokens(u) ?? prompt;
          break;
        }
        case 'message_stop':
          finished = true;
          break;
      }
      // The reply is whole at message_stop: leaving here closes the connection, so a server that then
      // holds it open cannot hang the run, nor a reset turn the whole reply into an error.
      if (finished) break;
    }
    // The SDK ends an aborted stream silently, and so does a connection a proxy cut short.
    if (signal?.aborted) throw new IncompleteStreamError('cancelled');
    if (!finished) throw new IncompleteStreamError('no message_stop');
    // A tool_use block still open at message_stop was cut off by the output limit (the API sends no
    // content_block_stop for it): it is reported as such, never dropped and never run.
    // A server may close the last block anyway: a call it closed with no JSON or with JSON that does not
    // parse was still being written when the limit hit (whole JSON could not have gone on).
    const last = tail?.position !== undefined ? toolCalls[tail.position] : undefined;
    if (stop === 'max_tokens' && last && tail?.json !== undefined && (tail.json.trim() === '' || last.parseError))
      toolCalls[tail.position!] = truncatedToolCall(last.id, last.name, tail.json);
    for (const [, open] of [...blocks.entries()].sort(([a], [b]) => a - b)) {
      if (open.kind !== 'tool_use') continue;
      const call = truncatedToolCall(open.id, open.name, open.json);
      toolCalls.push(call);
      yield { type: 'tool_call', call };
    }
    yield { type: 'done', text, toolCalls, usage: { ...prompt, outputTokens }, stopReason: stopReason(stop) };
  }
}

export function toMessagesRequest(
  model: string,
  request: ModelRequest,
  defaultMaxTokens: number,
): MessageCreateParamsStreaming {
  const messages: MessageParam[] = [];
  // Appends to the open user turn when there is one: consecutive tool results (and any text the
  // loop adds after them) must form ONE user message, tool_result blocks first.
  const pushUser = (block: ContentBlockParam, onlyAfterToolResults: boolean): void => {
    const last = messages.at(-1);
    if (last?.role === 'user') {
      const content: ContentBlockParam[] =
        typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
      if (!onlyAfterToolResults || content.every((b) => b.type === 'tool_result')) {
        last.content = [...content, block];
        return;
      }
    }
    messages.push({ role: 'user', content: block.type === 'text' ? block.text : [block] });
  };

  for (const message of request.messages) {
    switch (message.role) {
      case 'user':
        pushUser({ type: 'text', text: message.content }, false);
        break;
      case 'assistant': {
        const content: ContentBlockParam[] = [];
        if (message.text !== '') content.push({ type: 'text', text: message.text });
        for (const call of message.toolCalls) {
          // The API only accepts an object here; a call whose arguments never parsed goes back as {}
          // and its tool_result carries the validation error.
          content.push({
            type: 'tool_use',
            id: call.id,
            name: call.name,
            input: isObject(call.input) ? call.input : {},
          });
        }
        // The API rejects an empty assistant turn; dropping it lets the user turns around it merge.
        if (content.length > 0) messages.push({ role: 'assistant', content });
        break;
      }
      case 'tool':
        pushUser(
          { type: 'tool_result', tool_use_id: message.callId, content: message.content, is_error: message.isError },
          true,
        );
        break;
    }
  }

  const tools: Tool[] = request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: inputSchema(tool.inputSchema),
  }));
  return {
    model,
    max_tokens: request.maxOutputTokens ?? defaultMaxTokens,
    messages,
    stream: true,
    ...(request.system !== '' ? { system: request.system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
  };
}

function stopReason(stop: string | null): ModelStopReason {
  switch (stop) {
    case 'tool_use':
      return 'tool_use';
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'refusal':
      return 'filtered';
    default:
      // pause_turn, or a reason newer than this adapter.
      return 'other';
  }
}

/** The input side of a turn's Usage (providers/types.ts). */
interface PromptTokens {
  inputTokens: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/**
 * Anthropic's input_tokens leaves out the tokens read from and written to the prompt cache; a
 * budget must count them all, so inputTokens here is their sum (as OpenAI's prompt_tokens is).
 * Cache reads become cachedInputTokens, cache writes cacheWriteInputTokens (each priced at its own
 * rate). Fields the types call required can still be absent on the wire (older API versions,
 * compatible proxies).
 */
function promptTokens(u: {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}): PromptTokens | undefined {
  if (typeof u.input_tokens !== 'number') return undefined;
  const read = u.cache_read_input_tokens;
  const written = u.cache_creation_input_tokens;
  return {
    inputTokens: u.input_tokens + (written ?? 0) + (read ?? 0),
    ...(typeof read === 'number' && read > 0 ? { cachedInputTokens: read } : {}),
    ...(typeof written === 'number' && written > 0 ? { cacheWriteInputTokens: written } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function inputSchema(schema: unknown): Tool.InputSchema {
  // Tool schemas come from zod objects (type: 'object'); anything else would be a registry bug.
  return isObject(schema) ? (schema as Tool.InputSchema) : { type: 'object', properties: {} };
}
