import { describe, expect, it } from 'vitest';
import { collect, last, sse } from './fake-server';
import {
  blockStop,
  jsonDelta,
  messageDelta,
  messageStart,
  messageStop,
  ofType,
  ping,
  provider,
  request,
  server,
  textDelta,
  textStart,
  toolStart,
  useAnthropicServer,
} from './anthropic-harness';

/** Replies the output limit cut off (stop_reason max_tokens), as our own fixtures served over loopback. */
useAnthropicServer();

describe('anthropic provider: replies cut off at max_tokens', () => {
  it('text cut off: stopReason max_tokens, the text as far as it got', async () => {
    server.always((_req, res) =>
      sse(res, [
        messageStart(50),
        textStart(0),
        textDelta(0, 'The three steps are: first'),
        blockStop(0),
        messageDelta('max_tokens', 6),
        messageStop,
      ]),
    );
    const events = await collect(provider.stream(request({ maxOutputTokens: 6 })));
    expect(last(events)).toMatchObject({
      type: 'done',
      text: 'The three steps are: first',
      toolCalls: [],
      stopReason: 'max_tokens',
    });
  });

  it('a tool_use block still open at message_stop is reported cut off, with its partial input', async () => {
    server.always((_req, res) =>
      sse(res, [
        messageStart(80),
        textStart(0),
        textDelta(0, 'Writing the notes now.'),
        blockStop(0),
        toolStart(1, 'toolu_cut', 'write_file'),
        ping,
        jsonDelta(1, ''),
        jsonDelta(1, '{"path": "notes.md", "content": "line one\\nline'),
        // No content_block_stop: the limit hit inside the arguments.
        messageDelta('max_tokens', 64),
        messageStop,
      ]),
    );
    const events = await collect(provider.stream(request()));
    const calls = ofType(events, 'tool_call').map((e) => e.call);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      id: 'toolu_cut',
      name: 'write_file',
      input: '{"path": "notes.md", "content": "line one\\nline',
      truncated: true,
    });
    expect(last(events)).toMatchObject({
      type: 'done',
      text: 'Writing the notes now.',
      stopReason: 'max_tokens',
      toolCalls: [{ id: 'toolu_cut', truncated: true }],
    });
  });

  it('a whole call before the cut one stays whole', async () => {
    server.always((_req, res) =>
      sse(res, [
        messageStart(10),
        toolStart(0, 'toolu_ok', 'read_file'),
        jsonDelta(0, '{"path": "a.md"}'),
        blockStop(0),
        toolStart(1, 'toolu_cut', 'read_file'),
        jsonDelta(1, '{"pa'),
        messageDelta('max_tokens', 20),
        messageStop,
      ]),
    );
    const events = await collect(provider.stream(request()));
    const done = last(events);
    if (done.type !== 'done') throw new Error(`expected done, got ${done.type}`);
    expect(done.toolCalls[0]).toEqual({ id: 'toolu_ok', name: 'read_file', input: { path: 'a.md' } });
    expect(done.toolCalls[1]).toMatchObject({ id: 'toolu_cut', input: '{"pa', truncated: true });
    expect(server.requests).toHaveLength(1);
  });
});
