import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic';
import { createProvider } from '../../src/providers/registry';
import type { ModelEvent, ModelRequest, ModelToolSpec, RetryPolicy } from '../../src/providers/types';
import { FakeServer, collect, json, last, pieces, sse, type SseEvent } from './fake-server';

// The real Messages streaming wire format: named SSE events message_start, content_block_start,
// content_block_delta (text_delta / input_json_delta), content_block_stop, message_delta,
// message_stop, with ping events in between.
const messageStart = (inputTokens: number): SseEvent => ({
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
const ping: SseEvent = { event: 'ping', data: { type: 'ping' } };
const textStart = (index: number): SseEvent => ({
  event: 'content_block_start',
  data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
});
const textDelta = (index: number, text: string): SseEvent => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
});
const toolStart = (index: number, id: string, name: string): SseEvent => ({
  event: 'content_block_start',
  data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
});
const jsonDelta = (index: number, partial: string): SseEvent => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } },
});
const blockStop = (index: number): SseEvent => ({
  event: 'content_block_stop',
  data: { type: 'content_block_stop', index },
});
const messageDelta = (stop: string, outputTokens: number): SseEvent => ({
  event: 'message_delta',
  data: {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: outputTokens },
  },
});
const messageStop: SseEvent = { event: 'message_stop', data: { type: 'message_stop' } };
const apiError = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
  request_id: 'req_test',
});

const FAST: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 40 };
const TOOLS: ModelToolSpec[] = [
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
const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are careful.',
  messages: [{ role: 'user', content: 'Read package.json' }],
  tools: TOOLS,
  ...over,
});

let server: FakeServer;
let provider: AnthropicProvider;
beforeEach(async () => {
  server = await FakeServer.start();
  provider = new AnthropicProvider({ model: 'claude-test', apiKey: 'sk-ant-test', baseUrl: server.url, retry: FAST });
});
afterEach(async () => {
  await server.close();
});

/**
 * SDK 1.x sends the key as `Authorization: Bearer` (with anthropic-version 2026-10-21); 0.x sent
 * `x-api-key` (2023-06-01). Either way the key must be on the wire exactly once.
 */
const sentKey = (headers: IncomingHttpHeaders | undefined): string | undefined => {
  const bearer = headers?.authorization?.replace(/^Bearer /, '');
  const apiKey = headers?.['x-api-key'];
  expect(bearer === undefined || apiKey === undefined).toBe(true);
  return bearer ?? (typeof apiKey === 'string' ? apiKey : undefined);
};

const ofType = <T extends ModelEvent['type']>(events: ModelEvent[], type: T): Extract<ModelEvent, { type: T }>[] =>
  events.filter((e): e is Extract<ModelEvent, { type: T }> => e.type === type);

describe('anthropic provider', () => {
  it('streams text as it arrives and ends with usage and end_turn; sends the mapped request', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(25),
        textStart(0),
        ping,
        textDelta(0, 'Hel'),
        textDelta(0, 'lo, '),
        textDelta(0, 'world'),
        blockStop(0),
        messageDelta('end_turn', 7),
        messageStop,
      ]),
    );
    const events = await collect(provider.stream(request()));

    expect(ofType(events, 'text_delta').map((e) => e.text)).toEqual(['Hel', 'lo, ', 'world']);
    expect(last(events)).toEqual({
      type: 'done',
      text: 'Hello, world',
      toolCalls: [],
      usage: { inputTokens: 25, outputTokens: 7 },
      stopReason: 'end_turn',
    });

    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/v1/messages');
    expect(sentKey(req?.headers)).toBe('sk-ant-test');
    expect(req?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(req?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      system: 'You are careful.',
      messages: [{ role: 'user', content: 'Read package.json' }],
      tools: [
        { name: 'read_file', description: 'Read a file', input_schema: TOOLS[0]?.inputSchema },
        { name: 'git_status', description: 'Show git status', input_schema: TOOLS[1]?.inputSchema },
      ],
    });
  });

  it('assembles several tool_use blocks from input_json_delta chunks', async () => {
    const a = JSON.stringify({ path: 'package.json' });
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(50),
        textStart(0),
        textDelta(0, 'Let me look.'),
        blockStop(0),
        toolStart(1, 'toolu_a', 'read_file'),
        jsonDelta(1, ''),
        ...pieces(a, 3).map((p) => jsonDelta(1, p)),
        blockStop(1),
        toolStart(2, 'toolu_b', 'git_status'),
        blockStop(2),
        toolStart(3, 'toolu_c', 'read_file'),
        ...pieces(JSON.stringify({ path: 'src/ä.ts' }), 1).map((p) => jsonDelta(3, p)),
        blockStop(3),
        messageDelta('tool_use', 80),
        messageStop,
      ]),
    );
    const events = await collect(provider.stream(request()));

    const calls = [
      { id: 'toolu_a', name: 'read_file', input: { path: 'package.json' } },
      { id: 'toolu_b', name: 'git_status', input: {} },
      { id: 'toolu_c', name: 'read_file', input: { path: 'src/ä.ts' } },
    ];
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'tool_call', 'tool_call', 'tool_call', 'done']);
    expect(ofType(events, 'tool_call').map((e) => e.call)).toEqual(calls);
    expect(last(events)).toEqual({
      type: 'done',
      text: 'Let me look.',
      toolCalls: calls,
      usage: { inputTokens: 50, outputTokens: 80 },
      stopReason: 'tool_use',
    });
  });

  it('keeps a tool call with malformed input JSON, raw, with parseError, and does not fail', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(5),
        toolStart(0, 'toolu_x', 'read_file'),
        jsonDelta(0, '{"path": "pack'),
        blockStop(0),
        messageDelta('tool_use', 9),
        messageStop,
      ]),
    );
    const events = await collect(provider.stream(request()));

    expect(ofType(events, 'error')).toEqual([]);
    const [call] = ofType(events, 'tool_call');
    expect(call?.call).toMatchObject({ id: 'toolu_x', name: 'read_file', input: '{"path": "pack' });
    expect(call?.call.parseError).toMatch(/not valid JSON/);
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'tool_use', toolCalls: [call?.call] });
  });

  it('retries a 429, honouring retry-after-ms, then streams the result', async () => {
    server.enqueue(
      (_req, res) =>
        json(
          res,
          429,
          apiError('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
          { 'retry-after-ms': '25', 'retry-after': '1' },
        ),
      (_req, res) =>
        sse(res, [
          messageStart(3),
          textStart(0),
          textDelta(0, 'ok'),
          blockStop(0),
          messageDelta('end_turn', 1),
          messageStop,
        ]),
    );
    const started = Date.now();
    const events = await collect(provider.stream(request()));

    expect(events[0]).toEqual({ type: 'retry', attempt: 1, delayMs: 25, reason: '429 rate limited' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
    expect(events.slice(1).map((e) => e.type)).toEqual(['text_delta', 'done']);
    expect(server.requests).toHaveLength(2);
  });

  it('retries an overloaded error event that arrives in the stream before any output', async () => {
    server.enqueue(
      (_req, res) => sse(res, [messageStart(3), { event: 'error', data: apiError('overloaded_error', 'Overloaded') }]),
      (_req, res) =>
        sse(res, [
          messageStart(3),
          textStart(0),
          textDelta(0, 'ok'),
          blockStop(0),
          messageDelta('end_turn', 1),
          messageStop,
        ]),
    );
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['retry', 'text_delta', 'done']);
    expect(events[0]).toMatchObject({ reason: 'overloaded_error (stream)' });
  });

  it('gives up on a persistent 5xx (529 overloaded) after maxAttempts with retry events, kind server', async () => {
    server.always((_req, res) => json(res, 529, apiError('overloaded_error', 'Overloaded')));
    const events = await collect(provider.stream(request()));

    expect(ofType(events, 'retry').map((e) => e.attempt)).toEqual([1, 2]);
    const err = last(events);
    expect(err).toMatchObject({ type: 'error', kind: 'server', status: 529, retryable: true });
    expect(err.type === 'error' && err.message).toMatch(/server error \(529\).*Overloaded.*Gave up after 3 attempts/);
    expect(server.requests).toHaveLength(3);
  });

  it('fails fast on 401 with kind auth and a message naming ANTHROPIC_API_KEY', async () => {
    server.always((_req, res) => json(res, 401, apiError('authentication_error', 'invalid x-api-key')));
    const events = await collect(provider.stream(request()));

    expect(events).toHaveLength(1);
    const err = last(events);
    expect(err).toMatchObject({ type: 'error', kind: 'auth', status: 401, retryable: false });
    expect(err.type === 'error' && err.message).toBe(
      'ANTHROPIC_API_KEY was rejected (401): check the key. Anthropic said: invalid x-api-key',
    );
    expect(server.requests).toHaveLength(1);
  });

  it('fails fast on 400 with kind bad_request', async () => {
    server.always((_req, res) => json(res, 400, apiError('invalid_request_error', 'messages: roles must alternate')));
    const events = await collect(provider.stream(request()));
    expect(events).toHaveLength(1);
    expect(last(events)).toMatchObject({ type: 'error', kind: 'bad_request', status: 400, retryable: false });
  });

  it('cancels mid-stream: aborts the HTTP request and ends with kind cancelled', async () => {
    server.enqueue((_req, res) => sse(res, [messageStart(3), textStart(0), textDelta(0, 'partial ')], { hold: true }));
    const controller = new AbortController();
    const aborted = server.nextAbort();
    const events: ModelEvent[] = [];
    for await (const e of provider.stream(request({ signal: controller.signal }))) {
      events.push(e);
      if (e.type === 'text_delta') controller.abort();
    }
    await aborted;

    expect(events.map((e) => e.type)).toEqual(['text_delta', 'error']);
    expect(last(events)).toMatchObject({ type: 'error', kind: 'cancelled', retryable: false });
    expect(server.requests[0]?.aborted).toBe(true);
  });

  it('a signal aborted before the call yields cancelled without any request', async () => {
    const controller = new AbortController();
    controller.abort();
    const events = await collect(provider.stream(request({ signal: controller.signal })));
    expect(events).toEqual([
      { type: 'error', kind: 'cancelled', message: 'The model request was cancelled.', retryable: false },
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('a stream that ends without message_stop after output is an error, not retried', async () => {
    server.always((_req, res) => sse(res, [messageStart(3), textStart(0), textDelta(0, 'half')], { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'error']);
    expect(last(events)).toMatchObject({ kind: 'network' });
    expect(server.requests).toHaveLength(1);
  });

  it('maps a multi-turn conversation: tool_use blocks, consecutive tool results in ONE user message', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(3),
        textStart(0),
        textDelta(0, 'Done.'),
        blockStop(0),
        messageDelta('max_tokens', 1),
        messageStop,
      ]),
    );
    const events = await collect(
      provider.stream(
        request({
          system: '',
          maxOutputTokens: 512,
          messages: [
            { role: 'user', content: 'Fix the TODOs' },
            {
              role: 'assistant',
              text: 'Looking.',
              toolCalls: [
                { id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
                { id: 'toolu_2', name: 'read_file', input: '{"path": ', parseError: 'arguments are not valid JSON' },
              ],
            },
            { role: 'tool', callId: 'toolu_1', toolName: 'read_file', content: '// TODO', isError: false },
            {
              role: 'tool',
              callId: 'toolu_2',
              toolName: 'read_file',
              content: 'validation error: not valid JSON',
              isError: true,
            },
            { role: 'assistant', text: '', toolCalls: [{ id: 'toolu_3', name: 'git_status', input: {} }] },
            { role: 'tool', callId: 'toolu_3', toolName: 'git_status', content: 'clean', isError: false },
            { role: 'user', content: 'Keep going' },
          ],
        }),
      ),
    );
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(512);
    expect(body).not.toHaveProperty('system');
    expect(body.messages).toEqual([
      { role: 'user', content: 'Fix the TODOs' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '// TODO', is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'validation error: not valid JSON', is_error: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_3', name: 'git_status', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_3', content: 'clean', is_error: false },
          { type: 'text', text: 'Keep going' },
        ],
      },
    ]);
  });

  it('is reachable through createProvider with ANTHROPIC_BASE_URL and the key from env', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(2),
        textStart(0),
        textDelta(0, 'hi'),
        blockStop(0),
        messageDelta('end_turn', 1),
        messageStop,
      ]),
    );
    const p = createProvider('anthropic:claude-test', {
      env: { ANTHROPIC_API_KEY: 'sk-ant-env', ANTHROPIC_BASE_URL: server.url },
      retry: FAST,
    });
    expect(p.id).toBe('anthropic:claude-test');
    const events = await collect(p.stream(request({ tools: [] })));
    expect(last(events)).toEqual({
      type: 'done',
      text: 'hi',
      toolCalls: [],
      usage: { inputTokens: 2, outputTokens: 1 },
      stopReason: 'end_turn',
    });
    expect(sentKey(server.requests[0]?.headers)).toBe('sk-ant-env');
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });
});
