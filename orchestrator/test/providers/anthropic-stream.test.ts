import { describe, expect, it } from 'vitest';
import { collect, last, pieces, sse } from './fake-server';
import {
  messageStart,
  ping,
  textStart,
  textDelta,
  toolStart,
  jsonDelta,
  blockStop,
  messageDelta,
  messageStop,
  TOOLS,
  request,
  server,
  provider,
  useAnthropicServer,
  sentKey,
  ofType,
} from './anthropic-harness';

useAnthropicServer();

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
});
