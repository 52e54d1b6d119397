import { describe, expect, it } from 'vitest';
import type { ModelEvent } from '../../src/providers/types';
import { collect, last, sse } from './fake-server';
import { messageStart, textStart, textDelta, request, server, provider, useAnthropicServer } from './anthropic-harness';

useAnthropicServer();

describe('anthropic provider', () => {
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
});
