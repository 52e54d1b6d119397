import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, beforeEach, expect } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic';
import type { ModelEvent, ModelRequest, ModelToolSpec, RetryPolicy } from '../../src/providers/types';
import { FakeServer, type SseEvent } from './fake-server';

/** Messages API wire fixtures and a fake server for the Anthropic provider tests. */

// The real Messages streaming wire format: named SSE events message_start, content_block_start,
// content_block_delta (text_delta / input_json_delta), content_block_stop, message_delta,
// message_stop, with ping events in between.
export const messageStart = (inputTokens: number): SseEvent => ({
  event: 'message_start',
  data: {
    type: 'message_start',
    message: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
        service_tier: 'standard',
      },
    },
  },
});
export const ping: SseEvent = { event: 'ping', data: { type: 'ping' } };
export const textStart = (index: number): SseEvent => ({
  event: 'content_block_start',
  data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
});
export const textDelta = (index: number, text: string): SseEvent => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
});
export const toolStart = (index: number, id: string, name: string): SseEvent => ({
  event: 'content_block_start',
  data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
});
export const jsonDelta = (index: number, partial: string): SseEvent => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } },
});
export const blockStop = (index: number): SseEvent => ({
  event: 'content_block_stop',
  data: { type: 'content_block_stop', index },
});
export const messageDelta = (stop: string, outputTokens: number): SseEvent => ({
  event: 'message_delta',
  data: {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: outputTokens },
  },
});
export const messageStop: SseEvent = { event: 'message_stop', data: { type: 'message_stop' } };
export const apiError = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: 'req_test',
});

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
  { name: 'git_status', description: 'Show git status', inputSchema: { type: 'object', properties: {} } },
];
export const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are careful.',
  messages: [{ role: 'user', content: 'Read package.json' }],
  tools: TOOLS,
  ...over,
});

/** The fake server and the provider pointed at it, fresh for each test of the file that calls useAnthropicServer. */
export let server: FakeServer;
export let provider: AnthropicProvider;
export function useAnthropicServer(): void {
  beforeEach(async () => {
    server = await FakeServer.start();
    provider = new AnthropicProvider({ model: 'claude-test', apiKey: 'sk-ant-test', baseUrl: server.url, retry: FAST });
  });
  afterEach(async () => {
    await server.close();
  });
}

/**
 * SDK 1.x sends the key as `Authorization: Bearer` (with anthropic-version 2026-10-21); 0.x sent
 * `x-api-key` (2023-06-01). Either way the key must be on the wire exactly once.
 */
export const sentKey = (headers: IncomingHttpHeaders | undefined): string | undefined => {
  const bearer = headers?.authorization?.replace(/^Bearer /, '');
  const apiKey = headers?.['x-api-key'];
  expect(bearer === undefined || apiKey === undefined).toBe(true);
  return bearer ?? (typeof apiKey === 'string' ? apiKey : undefined);
};

export const ofType = <T extends ModelEvent['type']>(
  events: ModelEvent[],
  type: T,
): Extract<ModelEvent, { type: T }>[] => events.filter((e): e is Extract<ModelEvent, { type: T }> => e.type === type);
