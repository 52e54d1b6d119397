import { afterEach, beforeEach } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai';
import type { ModelEvent, ModelRequest, ModelToolSpec, RetryPolicy } from '../../src/providers/types';
import { FakeServer, type SseEvent } from './fake-server';

/** Chat Completions wire fixtures and a fake server for the OpenAI provider tests. */

// The real Chat Completions streaming wire format: chat.completion.chunk objects, a final usage
// chunk with no choices (stream_options.include_usage), then `data: [DONE]`.
export const BASE = {
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1_760_000_000,
  model: 'gpt-test',
  system_fingerprint: 'fp_test',
  service_tier: 'default',
};
export const chunk = (delta: Record<string, unknown>, finish: string | null = null): SseEvent => ({
  data: { ...BASE, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null },
});
export const usageChunk = (prompt: number, completion: number): SseEvent => ({
  data: {
    ...BASE,
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  },
});
export const DONE: SseEvent = { data: '[DONE]' };
export const role = chunk({ role: 'assistant', content: '', refusal: null });
export const toolStart = (index: number, id: string, name: string): SseEvent =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
export const toolArgs = (index: number, args: string): SseEvent =>
  chunk({ tool_calls: [{ index, function: { arguments: args } }] });

export const FAST: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 40 };
export const TOOLS: ModelToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a file',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'grep',
    description: 'Search files',
    inputSchema: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
  },
];
export const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are careful.',
  messages: [{ role: 'user', content: 'Read package.json' }],
  tools: TOOLS,
  ...over,
});

/** The fake server and the provider pointed at it, fresh for each test of the file that calls useOpenAIServer. */
export let server: FakeServer;
export let provider: OpenAIProvider;
export function useOpenAIServer(): void {
  beforeEach(async () => {
    server = await FakeServer.start();
    provider = new OpenAIProvider({ model: 'gpt-test', apiKey: 'sk-test', baseUrl: `${server.url}/v1`, retry: FAST });
  });
  afterEach(async () => {
    await server.close();
  });
}

export const ofType = <T extends ModelEvent['type']>(
  events: ModelEvent[],
  type: T,
): Extract<ModelEvent, { type: T }>[] => events.filter((e): e is Extract<ModelEvent, { type: T }> => e.type === type);
