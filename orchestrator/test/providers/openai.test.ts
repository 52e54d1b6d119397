import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai';
import { createProvider } from '../../src/providers/registry';
import type { ModelEvent, ModelRequest, ModelToolSpec, RetryPolicy } from '../../src/providers/types';
import { FakeServer, closedPort, collect, json, last, pieces, sse, type SseEvent } from './fake-server';

// The real Chat Completions streaming wire format: chat.completion.chunk objects, a final usage
// chunk with no choices (stream_options.include_usage), then `data: [DONE]`.
const BASE = {
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1_760_000_000,
  model: 'gpt-test',
  system_fingerprint: 'fp_test',
  service_tier: 'default',
};
const chunk = (delta: Record<string, unknown>, finish: string | null = null): SseEvent => ({
  data: { ...BASE, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null },
});
const usageChunk = (prompt: number, completion: number): SseEvent => ({
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
const DONE: SseEvent = { data: '[DONE]' };
const role = chunk({ role: 'assistant', content: '', refusal: null });
const toolStart = (index: number, id: string, name: string): SseEvent =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
const toolArgs = (index: number, args: string): SseEvent =>
  chunk({ tool_calls: [{ index, function: { arguments: args } }] });

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
  {
    name: 'grep',
    description: 'Search files',
    inputSchema: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
  },
];
const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  system: 'You are careful.',
  messages: [{ role: 'user', content: 'Read package.json' }],
  tools: TOOLS,
  ...over,
});

let server: FakeServer;
let provider: OpenAIProvider;
beforeEach(async () => {
  server = await FakeServer.start();
  provider = new OpenAIProvider({ model: 'gpt-test', apiKey: 'sk-test', baseUrl: `${server.url}/v1`, retry: FAST });
});
afterEach(async () => {
  await server.close();
});

const ofType = <T extends ModelEvent['type']>(events: ModelEvent[], type: T): Extract<ModelEvent, { type: T }>[] =>
  events.filter((e): e is Extract<ModelEvent, { type: T }> => e.type === type);

describe('openai provider', () => {
  it('streams text as it arrives and ends with usage and end_turn; sends the mapped request', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        role,
        chunk({ content: 'Hel' }),
        chunk({ content: 'lo, ' }),
        chunk({ content: 'world' }),
        chunk({}, 'stop'),
        usageChunk(12, 5),
        DONE,
      ]),
    );
    const events = await collect(provider.stream(request()));

    expect(ofType(events, 'text_delta').map((e) => e.text)).toEqual(['Hel', 'lo, ', 'world']);
    expect(last(events)).toEqual({
      type: 'done',
      text: 'Hello, world',
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 5 },
      stopReason: 'end_turn',
    });

    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/v1/chat/completions');
    expect(req?.headers.authorization).toBe('Bearer sk-test');
    expect(req?.body).toEqual({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You are careful.' },
        { role: 'user', content: 'Read package.json' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'read_file', description: 'Read a file', parameters: TOOLS[0]?.inputSchema },
        },
        {
          type: 'function',
          function: { name: 'grep', description: 'Search files', parameters: TOOLS[1]?.inputSchema },
        },
      ],
    });
  });

  it('assembles several tool calls from arguments split across many chunks', async () => {
    const a = JSON.stringify({ path: 'package.json' });
    const b = JSON.stringify({ pattern: 'TODO|FIXME' });
    server.enqueue((_req, res) =>
      sse(res, [
        role,
        chunk({ content: 'Let me look.' }),
        toolStart(0, 'call_a', 'read_file'),
        ...pieces(a, 3).map((p) => toolArgs(0, p)),
        toolStart(1, 'call_b', 'grep'),
        ...pieces(b, 2).map((p) => toolArgs(1, p)),
        chunk({}, 'tool_calls'),
        usageChunk(40, 22),
        DONE,
      ]),
    );
    const events = await collect(provider.stream(request()));

    const calls = [
      { id: 'call_a', name: 'read_file', input: { path: 'package.json' } },
      { id: 'call_b', name: 'grep', input: { pattern: 'TODO|FIXME' } },
    ];
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'tool_call', 'tool_call', 'done']);
    expect(ofType(events, 'tool_call').map((e) => e.call)).toEqual(calls);
    expect(last(events)).toEqual({
      type: 'done',
      text: 'Let me look.',
      toolCalls: calls,
      usage: { inputTokens: 40, outputTokens: 22 },
      stopReason: 'tool_use',
    });
  });

  it('keeps a call with malformed arguments JSON, raw, with parseError, and does not fail', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        role,
        toolStart(0, 'call_x', 'read_file'),
        toolArgs(0, '{"path": "pack'),
        toolArgs(0, 'age.json'),
        chunk({}, 'tool_calls'),
        usageChunk(1, 1),
        DONE,
      ]),
    );
    const events = await collect(provider.stream(request()));

    expect(ofType(events, 'error')).toEqual([]);
    const [call] = ofType(events, 'tool_call');
    expect(call?.call.input).toBe('{"path": "package.json');
    expect(call?.call.parseError).toMatch(/not valid JSON/);
    const done = last(events);
    expect(done.type === 'done' && done.stopReason).toBe('tool_use');
    expect(done.type === 'done' && done.toolCalls).toEqual([call?.call]);
  });

  it('retries a 429, honouring retry-after capped at maxDelayMs, then streams the result', async () => {
    server.enqueue(
      (_req, res) =>
        json(
          res,
          429,
          {
            error: {
              message: 'Rate limit reached for gpt-test',
              type: 'requests',
              param: null,
              code: 'rate_limit_exceeded',
            },
          },
          { 'retry-after': '1' },
        ),
      (_req, res) => sse(res, [role, chunk({ content: 'ok' }), chunk({}, 'stop'), usageChunk(3, 1), DONE]),
    );
    const started = Date.now();
    const events = await collect(provider.stream(request()));

    expect(events[0]).toEqual({ type: 'retry', attempt: 1, delayMs: 40, reason: '429 rate limited' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect(events.slice(1).map((e) => e.type)).toEqual(['text_delta', 'done']);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body).toEqual(server.requests[0]?.body);
  });

  it('gives up on a persistent 500 after maxAttempts with retry events, kind server', async () => {
    server.always((_req, res) =>
      json(res, 500, {
        error: {
          message: 'The server had an error while processing your request.',
          type: 'server_error',
          param: null,
          code: null,
        },
      }),
    );
    const events = await collect(provider.stream(request()));

    expect(ofType(events, 'retry').map((e) => e.attempt)).toEqual([1, 2]);
    for (const r of ofType(events, 'retry')) expect(r.delayMs).toBeLessThanOrEqual(FAST.maxDelayMs);
    const err = last(events);
    expect(err).toMatchObject({ type: 'error', kind: 'server', status: 500, retryable: true });
    expect(err.type === 'error' && err.message).toMatch(/server error \(500\).*Gave up after 3 attempts/);
    expect(server.requests).toHaveLength(3);
  });

  it('fails fast on 401 with kind auth and a message naming OPENAI_API_KEY', async () => {
    server.always((_req, res) =>
      json(res, 401, {
        error: {
          message: 'Incorrect API key provided: sk-test.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      }),
    );
    const events = await collect(provider.stream(request()));

    expect(events).toHaveLength(1);
    const err = last(events);
    expect(err).toMatchObject({ type: 'error', kind: 'auth', status: 401, retryable: false });
    expect(err.type === 'error' && err.message).toMatch(/^OPENAI_API_KEY was rejected \(401\): check the key\./);
    expect(server.requests).toHaveLength(1);
  });

  it('fails fast on other 4xx with kind bad_request (404 names the model)', async () => {
    server.always((_req, res) =>
      json(res, 404, {
        error: {
          message: 'The model `gpt-test` does not exist',
          type: 'invalid_request_error',
          param: null,
          code: 'model_not_found',
        },
      }),
    );
    const events = await collect(provider.stream(request()));
    expect(events).toHaveLength(1);
    expect(last(events)).toMatchObject({ type: 'error', kind: 'bad_request', status: 404, retryable: false });
    expect((last(events) as { message: string }).message).toContain('"gpt-test"');
  });

  it('cancels mid-stream: aborts the HTTP request and ends with kind cancelled', async () => {
    server.enqueue((_req, res) => sse(res, [role, chunk({ content: 'partial ' })], { hold: true }));
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
    expect(server.requests).toHaveLength(1);
  });

  it('cancels during a retry wait without another attempt', async () => {
    server.always((_req, res) => json(res, 503, { error: { message: 'overloaded' } }, { 'retry-after-ms': '5000' }));
    const slow = new OpenAIProvider({
      model: 'gpt-test',
      apiKey: 'sk-test',
      baseUrl: `${server.url}/v1`,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 10_000 },
    });
    const controller = new AbortController();
    const events: ModelEvent[] = [];
    for await (const e of slow.stream(request({ signal: controller.signal }))) {
      events.push(e);
      if (e.type === 'retry') setTimeout(() => controller.abort(), 10);
    }
    expect(events.map((e) => e.type)).toEqual(['retry', 'error']);
    expect(events[0]).toMatchObject({ delayMs: 5000 });
    expect(last(events)).toMatchObject({ kind: 'cancelled' });
    expect(server.requests).toHaveLength(1);
  });

  it('never retries once output was streamed: a cut stream is a network error', async () => {
    server.always((_req, res) => sse(res, [role, chunk({ content: 'half an ans' })], { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'error']);
    expect(last(events)).toMatchObject({ kind: 'network', retryable: true });
    expect((last(events) as { message: string }).message).toMatch(
      /stopped streaming before the response was complete.*not retried/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('retries a stream cut before any output', async () => {
    server.enqueue(
      (_req, res) => sse(res, [role], { cut: true }),
      (_req, res) => sse(res, [role, chunk({ content: 'fine' }), chunk({}, 'stop'), usageChunk(1, 1), DONE]),
    );
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['retry', 'text_delta', 'done']);
    expect(events[0]).toMatchObject({ type: 'retry', attempt: 1, reason: 'stream cut short' });
  });

  it('times out a silent server (kind timeout) and a refused connection (kind network)', async () => {
    server.always((_req, res) => void setTimeout(() => json(res, 200, {}), 1_000));
    const timing = new OpenAIProvider({
      model: 'gpt-test',
      apiKey: 'sk-test',
      baseUrl: `${server.url}/v1`,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
      timeoutMs: 50,
    });
    const t = await collect(timing.stream(request()));
    expect(t.map((e) => e.type)).toEqual(['retry', 'error']);
    expect(last(t)).toMatchObject({ kind: 'timeout', retryable: true });
    expect((last(t) as { message: string }).message).toMatch(/within 50 ms/);

    const port = await closedPort();
    const refused = new OpenAIProvider({
      model: 'gpt-test',
      apiKey: 'sk-test',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    });
    const n = await collect(refused.stream(request()));
    expect(n.map((e) => e.type)).toEqual(['retry', 'error']);
    expect(last(n)).toMatchObject({ kind: 'network', retryable: true });
    expect((last(n) as { message: string }).message).toMatch(/ECONNREFUSED.*OPENAI_BASE_URL/);
  });

  it('maps a multi-turn conversation with tool results, and the output limit', async () => {
    server.enqueue((_req, res) =>
      sse(res, [role, chunk({ content: 'Done.' }), chunk({}, 'length'), usageChunk(1, 1), DONE]),
    );
    const events = await collect(
      provider.stream(
        request({
          maxOutputTokens: 256,
          messages: [
            { role: 'user', content: 'Fix the TODOs' },
            {
              role: 'assistant',
              text: 'Looking.',
              toolCalls: [
                { id: 'call_1', name: 'grep', input: { pattern: 'TODO' } },
                { id: 'call_2', name: 'read_file', input: '{"path": ', parseError: 'arguments are not valid JSON' },
              ],
            },
            { role: 'tool', callId: 'call_1', toolName: 'grep', content: 'src/a.ts:3: TODO', isError: false },
            {
              role: 'tool',
              callId: 'call_2',
              toolName: 'read_file',
              content: 'validation error: arguments are not valid JSON',
              isError: true,
            },
            {
              role: 'assistant',
              text: '',
              toolCalls: [{ id: 'call_3', name: 'read_file', input: { path: 'src/a.ts' } }],
            },
            { role: 'tool', callId: 'call_3', toolName: 'read_file', content: '// TODO: fix', isError: false },
            { role: 'user', content: 'Keep going' },
          ],
        }),
      ),
    );
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.max_completion_tokens).toBe(256);
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are careful.' },
      { role: 'user', content: 'Fix the TODOs' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'grep', arguments: '{"pattern":"TODO"}' } },
          { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path": ' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'src/a.ts:3: TODO' },
      { role: 'tool', tool_call_id: 'call_2', content: 'validation error: arguments are not valid JSON' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_3', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_3', content: '// TODO: fix' },
      { role: 'user', content: 'Keep going' },
    ]);
  });

  it('stops the HTTP request when the consumer stops reading', async () => {
    server.enqueue((_req, res) => sse(res, [role, chunk({ content: 'a' })], { hold: true }));
    const aborted = server.nextAbort();
    for await (const e of provider.stream(request())) {
      if (e.type === 'text_delta') break;
    }
    await aborted;
    expect(server.requests[0]?.aborted).toBe(true);
  });

  it('is reachable through createProvider with OPENAI_BASE_URL and the key from env', async () => {
    server.enqueue((_req, res) => sse(res, [role, chunk({ content: 'hi' }), chunk({}, 'stop'), DONE]));
    const p = createProvider('openai:gpt-test', {
      env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${server.url}/v1` },
      retry: FAST,
    });
    const events = await collect(p.stream(request({ tools: [] })));
    // A compatible server that ignores include_usage: zero usage, still a result.
    expect(last(events)).toEqual({
      type: 'done',
      text: 'hi',
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      stopReason: 'end_turn',
    });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-env');
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });
});
