import { describe, expect, it } from 'vitest';
import { collect, last, sse } from './fake-server';
import {
  blockStop,
  jsonDelta,
  messageDelta,
  messageStart,
  messageStop,
  provider,
  request,
  server,
  textDelta,
  textStart,
  toolStart,
  useAnthropicServer,
} from './anthropic-harness';
import type { ModelEvent } from '../../src/providers/types';

/**
 * Red team (issue 13): an Anthropic-style server (a proxy, a compatible gateway) that closes the
 * tool_use block the output limit cut off. The call must still come out cut off, never runnable.
 */
useAnthropicServer();

const cutCall = (json: string[]) => [
  messageStart(40),
  textStart(0),
  textDelta(0, 'Checking the tree.'),
  blockStop(0),
  toolStart(1, 'toolu_cut', 'list_files'),
  ...json.map((j) => jsonDelta(1, j)),
  blockStop(1),
  messageDelta('max_tokens', 16),
  messageStop,
];
type Done = Extract<ModelEvent, { type: 'done' }>;

describe('red team: a tool_use block closed at max_tokens', () => {
  it('with no JSON at all: cut off, not a call with {} (which a tool without required fields would run)', async () => {
    server.always((_req, res) => sse(res, cutCall([])));
    const done = last(await collect(provider.stream(request()))) as Done;
    expect(done.stopReason).toBe('max_tokens');
    expect(done.toolCalls).toEqual([expect.objectContaining({ id: 'toolu_cut', truncated: true })]);
  });

  it('with JSON cut before its closing brace: cut off (not merely bad JSON)', async () => {
    server.always((_req, res) => sse(res, cutCall(['{"path": "sr'])));
    const done = last(await collect(provider.stream(request()))) as Done;
    expect(done.toolCalls).toEqual([expect.objectContaining({ truncated: true, input: '{"path": "sr' })]);
  });

  it('with whole JSON: the call is whole (nothing could follow its closing brace)', async () => {
    server.always((_req, res) => sse(res, cutCall(['{"path": "src"}'])));
    const done = last(await collect(provider.stream(request()))) as Done;
    expect(done.toolCalls).toEqual([{ id: 'toolu_cut', name: 'list_files', input: { path: 'src' } }]);
  });

  it('an earlier call closed with {} stays whole when a later text block was the one cut', async () => {
    server.always((_req, res) =>
      sse(res, [
        messageStart(40),
        toolStart(0, 'toolu_ok', 'git_status'),
        blockStop(0),
        textStart(1),
        textDelta(1, 'and then I will'),
        blockStop(1),
        messageDelta('max_tokens', 16),
        messageStop,
      ]),
    );
    const done = last(await collect(provider.stream(request()))) as Done;
    expect(done.toolCalls).toEqual([{ id: 'toolu_ok', name: 'git_status', input: {} }]);
  });
});

describe('red team: the connection after message_stop', () => {
  const whole = [
    messageStart(10),
    textStart(0),
    textDelta(0, 'Done.'),
    blockStop(0),
    messageDelta('end_turn', 3),
    messageStop,
  ];

  it('held open: the reply ends at message_stop, the client does not wait for the connection to close', async () => {
    server.always((_req, res) => sse(res, whole, { hold: true }));
    const events = await Promise.race([
      collect(provider.stream(request())),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 3000)),
    ]);
    expect(events).not.toBe('hung');
    expect(last(events as ModelEvent[])).toMatchObject({ type: 'done', text: 'Done.' });
  });

  it('reset: one request, the reply whole', async () => {
    server.always((_req, res) => sse(res, whole, { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(server.requests).toHaveLength(1);
    expect(last(events)).toMatchObject({ type: 'done', text: 'Done.' });
  });
});
