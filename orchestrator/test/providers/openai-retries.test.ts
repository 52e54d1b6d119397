import { describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai';
import { closedPort, collect, json, last, sse } from './fake-server';
import {
  chunk,
  usageChunk,
  DONE,
  role,
  FAST,
  request,
  server,
  provider,
  useOpenAIServer,
  ofType,
} from './openai-harness';

useOpenAIServer();

describe('openai provider', () => {
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
});
