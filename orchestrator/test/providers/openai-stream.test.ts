import { describe, expect, it } from 'vitest';
import { collect, last, pieces, sse } from './fake-server';
import {
  chunk,
  usageChunk,
  DONE,
  role,
  toolStart,
  toolArgs,
  TOOLS,
  request,
  server,
  provider,
  useOpenAIServer,
  ofType,
} from './openai-harness';

useOpenAIServer();

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
});
