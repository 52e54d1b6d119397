import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/providers/anthropic';
import { OpenAIProvider } from '../../src/providers/openai';
import type { ModelEvent } from '../../src/providers/types';
import { costOf } from '../../src/usage/cost';
import { priceFor } from '../../src/usage/price-for';
import { blockStop, messageDelta, messageStop, textDelta, textStart } from './anthropic-harness';
import { collect, FakeServer, last, sse, type SseEvent } from './fake-server';
import { BASE, chunk, DONE, FAST, request, role } from './openai-harness';

/** Cached prompt tokens as each API reports them, over a loopback server speaking its wire format. */

async function withServer<T>(run: (url: string, server: FakeServer) => Promise<T>): Promise<T> {
  const server = await FakeServer.start();
  try {
    return await run(server.url, server);
  } finally {
    await server.close();
  }
}

function done(events: ModelEvent[]): Extract<ModelEvent, { type: 'done' }> {
  const end = last(events);
  if (end?.type !== 'done') throw new Error(`the stream did not end with done: ${JSON.stringify(end)}`);
  return end;
}

describe('OpenAI cached tokens', () => {
  const usage = (details: unknown): SseEvent => ({
    data: {
      ...BASE,
      choices: [],
      usage: { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: details },
    },
  });

  it('reads prompt_tokens_details.cached_tokens; inputTokens stays every prompt token', async () => {
    const events = await withServer(async (url, server) => {
      server.enqueue((_req, res) =>
        sse(res, [role, chunk({ content: 'ok' }), chunk({}, 'stop'), usage({ cached_tokens: 1920 }), DONE]),
      );
      const p = new OpenAIProvider({ model: 'gpt-4.1', apiKey: 'sk-test', baseUrl: `${url}/v1`, retry: FAST });
      return collect(p.stream(request()));
    });
    expect(done(events).usage).toEqual({ inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920 });
    // Priced at gpt-4.1's rates: 86 uncached at $2, 1920 cached at $0.50, 300 out at $8 per million.
    expect(costOf(done(events).usage, priceFor('openai:gpt-4.1')!)).toBeCloseTo(
      (86 * 2 + 1920 * 0.5 + 300 * 8) / 1e6,
      10,
    );
  });

  it('a server that reports no details (or null) has no cached tokens', async () => {
    for (const details of [null, undefined, {}]) {
      const events = await withServer(async (url, server) => {
        server.enqueue((_req, res) =>
          sse(res, [role, chunk({ content: 'ok' }), chunk({}, 'stop'), usage(details), DONE]),
        );
        const p = new OpenAIProvider({ model: 'm', apiKey: 'sk-test', baseUrl: `${url}/v1`, retry: FAST });
        return collect(p.stream(request()));
      });
      expect(done(events).usage).toEqual({ inputTokens: 2006, outputTokens: 300 });
    }
  });
});

describe('Anthropic cached tokens', () => {
  const start = (input: number, read: number | undefined, written: number | undefined): SseEvent => ({
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
          input_tokens: input,
          ...(written !== undefined ? { cache_creation_input_tokens: written } : {}),
          ...(read !== undefined ? { cache_read_input_tokens: read } : {}),
          output_tokens: 1,
        },
      },
    },
  });
  const stream = (first: SseEvent) =>
    withServer(async (url, server) => {
      server.enqueue((_req, res) =>
        sse(res, [first, textStart(0), textDelta(0, 'ok'), blockStop(0), messageDelta('end_turn', 40), messageStop]),
      );
      const p = new AnthropicProvider({ model: 'claude-test', apiKey: 'k', baseUrl: url, retry: FAST });
      return collect(p.stream(request()));
    });

  it('input_tokens leaves out cache reads and writes: inputTokens adds them back', async () => {
    const events = await stream(start(12, 3000, 500));
    const u = done(events).usage;
    expect(u).toEqual({ inputTokens: 3512, outputTokens: 40, cachedInputTokens: 3000, cacheWriteInputTokens: 500 });
    // Cache writes at the 5-minute write price ($3.75), reads at $0.30, the rest at $3, output at $15.
    expect(costOf(u, priceFor('anthropic:claude-sonnet-4-5-20250929')!)).toBeCloseTo(
      (12 * 3 + 3000 * 0.3 + 500 * 3.75 + 40 * 15) / 1e6,
      10,
    );
  });

  it('no cache fields (older API versions, proxies) means no cached tokens', async () => {
    const events = await stream(start(12, undefined, undefined));
    expect(done(events).usage).toEqual({ inputTokens: 12, outputTokens: 40 });
  });
});
