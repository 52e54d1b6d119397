import { describe, expect, it } from 'vitest';
import { collect, last, sse } from './fake-server';
import {
  chunk,
  usageChunk,
  DONE,
  role,
  toolStart,
  toolArgs,
  request,
  server,
  provider,
  useOpenAIServer,
  ofType,
} from './openai-harness';

/**
 * How a Chat Completions stream ends: a finish_reason, `[DONE]` alone (some compatible servers
 * never send a finish_reason), or neither (a dropped connection). Our own fixtures, served over
 * loopback to the real provider.
 */
useOpenAIServer();

describe('openai provider: how a stream ends', () => {
  it('[DONE] without a finish_reason is a whole reply: one request, end_turn inferred and noted', async () => {
    server.always((_req, res) =>
      sse(res, [role, chunk({ content: 'All ' }), chunk({ content: 'done.' }), usageChunk(9, 3), DONE]),
    );
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'text_delta', 'done']);
    expect(last(events)).toMatchObject({ type: 'done', text: 'All done.', toolCalls: [], stopReason: 'end_turn' });
    expect((last(events) as { stopNote?: string }).stopNote).toMatch(/\[DONE\].*no finish_reason.*end_turn/);
    expect(server.requests).toHaveLength(1);
  });

  it('[DONE] without a finish_reason after a tool call: the call comes out and tool_use is inferred', async () => {
    server.always((_req, res) =>
      sse(res, [role, toolStart(0, 'call_x', 'read_file'), toolArgs(0, '{"path":'), toolArgs(0, '"a.md"}'), DONE]),
    );
    const events = await collect(provider.stream(request()));
    expect(ofType(events, 'tool_call').map((e) => e.call)).toEqual([
      { id: 'call_x', name: 'read_file', input: { path: 'a.md' } },
    ]);
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'tool_use' });
    expect((last(events) as { stopNote?: string }).stopNote).toMatch(/tool_use was inferred/);
    expect(server.requests).toHaveLength(1);
  });

  it('[DONE] split across two network writes still counts', async () => {
    server.always(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ content: 'ok' }).data)}\n\ndata: [DO`);
      await new Promise((r) => setTimeout(r, 20));
      res.end('NE]\n\n');
    });
    const events = await collect(provider.stream(request()));
    expect(last(events)).toMatchObject({ type: 'done', text: 'ok', stopReason: 'end_turn' });
    expect(server.requests).toHaveLength(1);
  });

  it('[DONE], no finish_reason, every allowed output token used: max_tokens, the open call cut off', async () => {
    server.always((_req, res) =>
      sse(res, [role, toolStart(0, 'call_y', 'read_file'), toolArgs(0, '{"pa'), usageChunk(20, 8), DONE]),
    );
    const events = await collect(provider.stream(request({ maxOutputTokens: 8 })));
    expect(last(events)).toMatchObject({
      type: 'done',
      stopReason: 'max_tokens',
      toolCalls: [{ id: 'call_y', name: 'read_file', input: '{"pa', truncated: true }],
    });
    expect((last(events) as { stopNote?: string }).stopNote).toMatch(/all 8 tokens/);
  });

  it('neither a finish_reason nor [DONE]: an incomplete stream, retried while nothing was shown', async () => {
    server.always((_req, res) => sse(res, [role, usageChunk(4, 0)]));
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['retry', 'retry', 'error']);
    expect(ofType(events, 'retry')[0]).toMatchObject({ reason: 'stream cut short' });
    expect(last(events)).toMatchObject({ type: 'error', kind: 'network', retryable: true });
    expect((last(events) as { message: string }).message).toMatch(/neither a finish_reason nor \[DONE\]/);
    expect(server.requests).toHaveLength(3);
  });

  it('a connection cut after text, with neither marker: an error, not retried (it would repeat the text)', async () => {
    server.always((_req, res) => sse(res, [role, chunk({ content: 'half a sen' })], { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'error']);
    expect(server.requests).toHaveLength(1);
  });

  it("finish_reason 'length' on text: max_tokens, no calls", async () => {
    server.always((_req, res) =>
      sse(res, [role, chunk({ content: '{"' }), chunk({}, 'length'), usageChunk(30, 1), DONE]),
    );
    const events = await collect(provider.stream(request({ maxOutputTokens: 1 })));
    expect(last(events)).toMatchObject({ type: 'done', text: '{"', toolCalls: [], stopReason: 'max_tokens' });
    expect(last(events)).not.toHaveProperty('stopNote');
  });

  it("finish_reason 'length' inside a call's arguments: the earlier call is whole, the last is cut off", async () => {
    server.always((_req, res) =>
      sse(res, [
        role,
        toolStart(0, 'call_a', 'read_file'),
        toolArgs(0, '{"path":"one.md"}'),
        toolStart(1, 'call_b', 'read_file'),
        toolArgs(1, '{"path":"tw'),
        chunk({}, 'length'),
        usageChunk(40, 16),
        DONE,
      ]),
    );
    const events = await collect(provider.stream(request()));
    const done = last(events);
    expect(done).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    if (done.type !== 'done') return;
    expect(done.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', input: { path: 'one.md' } },
      {
        id: 'call_b',
        name: 'read_file',
        input: '{"path":"tw',
        truncated: true,
        parseError: expect.stringMatching(/cut off at the output limit/) as unknown,
      },
    ]);
    expect(ofType(events, 'tool_call')).toHaveLength(2);
  });

  it("finish_reason 'length' right after a call's name: cut off, not a call with no arguments", async () => {
    server.always((_req, res) =>
      sse(res, [role, toolStart(0, 'call_c', 'read_file'), chunk({}, 'length'), usageChunk(5, 4), DONE]),
    );
    const events = await collect(provider.stream(request()));
    expect(last(events)).toMatchObject({
      type: 'done',
      stopReason: 'max_tokens',
      toolCalls: [{ id: 'call_c', input: '', truncated: true }],
    });
  });
});
