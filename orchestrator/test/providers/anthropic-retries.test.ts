import { describe, expect, it } from 'vitest';
import { collect, json, last, sse } from './fake-server';
import {
  messageStart,
  textStart,
  textDelta,
  blockStop,
  messageDelta,
  messageStop,
  apiError,
  request,
  server,
  provider,
  useAnthropicServer,
  ofType,
} from './anthropic-harness';

useAnthropicServer();

describe('anthropic provider', () => {
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

  it('a stream that ends without message_stop after output is an error, not retried', async () => {
    server.always((_req, res) => sse(res, [messageStart(3), textStart(0), textDelta(0, 'half')], { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'error']);
    expect(last(events)).toMatchObject({ kind: 'network' });
    expect(server.requests).toHaveLength(1);
  });
});
