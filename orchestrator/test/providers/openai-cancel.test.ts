import { describe, expect, it } from 'vitest';
import { OpenAIProvider } from '../../src/providers/openai';
import type { ModelEvent } from '../../src/providers/types';
import { json, last, sse } from './fake-server';
import { chunk, role, request, server, provider, useOpenAIServer } from './openai-harness';

useOpenAIServer();

describe('openai provider', () => {
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

  it('stops the HTTP request when the consumer stops reading', async () => {
    server.enqueue((_req, res) => sse(res, [role, chunk({ content: 'a' })], { hold: true }));
    const aborted = server.nextAbort();
    for await (const e of provider.stream(request())) {
      if (e.type === 'text_delta') break;
    }
    await aborted;
    expect(server.requests[0]?.aborted).toBe(true);
  });
});
