import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { collect, last, sse } from './fake-server';
import {
  BASE,
  chunk,
  DONE,
  ofType,
  provider,
  request,
  role,
  server,
  toolArgs,
  toolStart,
  usageChunk,
  useOpenAIServer,
} from './openai-harness';

/**
 * Red team (issue 13): a hostile or broken OpenAI-compatible server on loopback. None of these may
 * make a cut-off or empty reply look whole, make a cut-off call runnable, or send a request twice
 * after the server said it was done.
 */
useOpenAIServer();

/** Writes raw bytes in the given pieces, a little apart, then ends (or cuts) the connection. */
async function raw(res: http.ServerResponse, pieces: string[], opts: { cut?: boolean } = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const p of pieces) {
    res.write(p);
    await new Promise((r) => setTimeout(r, 5));
  }
  if (opts.cut) {
    await new Promise((r) => setTimeout(r, 30));
    res.socket?.destroy();
  } else res.end();
}
const line = (data: unknown): string => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

describe('red team: a hostile OpenAI-compatible stream', () => {
  it('"[DONE]" inside a content string is not the end marker: a cut connection is still incomplete', async () => {
    server.always((_req, res) =>
      raw(res, [line(role.data), line(chunk({ content: '\ndata: [DONE]\n' }).data)], { cut: true }),
    );
    const events = await collect(provider.stream(request()));
    expect(ofType(events, 'done')).toEqual([]);
    expect(last(events)).toMatchObject({ type: 'error' });
  });

  it('a [DONE] split byte by byte across writes is still seen (one request, no retry)', async () => {
    const done = 'data: [DONE]\n\n';
    server.always((_req, res) => raw(res, [line(chunk({ content: 'Hi.' }).data), ...done.split('')]));
    const events = await collect(provider.stream(request()));
    expect(last(events)).toMatchObject({ type: 'done', text: 'Hi.', stopReason: 'end_turn' });
    expect(server.requests).toHaveLength(1);
  });

  it('data after [DONE] (and a repeated [DONE]) is ignored, not appended, and nothing is resent', async () => {
    server.always((_req, res) =>
      sse(res, [chunk({ content: 'Done.' }), DONE, chunk({ content: ' rm -rf /' }, 'stop'), DONE, DONE]),
    );
    const events = await collect(provider.stream(request()));
    expect(last(events)).toMatchObject({ type: 'done', text: 'Done.' });
    expect(server.requests).toHaveLength(1);
  });

  it('a finish_reason on another choice index does not finish choice 0', async () => {
    const other = { data: { ...BASE, choices: [{ index: 1, delta: {}, finish_reason: 'stop' }] } };
    server.always((_req, res) => sse(res, [chunk({ content: 'The answer is' }), other], { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(ofType(events, 'done')).toEqual([]);
    expect(last(events)).toMatchObject({ type: 'error' });
  });

  it('an empty stream that is only [DONE] is not an (empty) answer, and is not resent', async () => {
    server.always((_req, res) => sse(res, [DONE]));
    const events = await collect(provider.stream(request()));
    expect(ofType(events, 'done')).toEqual([]);
    expect(last(events)).toMatchObject({ type: 'error', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('a role chunk and usage, then [DONE], with no text and no call, is not an answer either', async () => {
    server.always((_req, res) => sse(res, [role, usageChunk(12, 0), DONE]));
    const events = await collect(provider.stream(request()));
    expect(ofType(events, 'done')).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('a call cut at the limit whose arguments stop just before the closing brace is truncated', async () => {
    server.always((_req, res) =>
      sse(res, [toolStart(0, 'call_c', 'read_file'), toolArgs(0, '{"path":"a"'), chunk({}, 'length'), DONE]),
    );
    const done = last(await collect(provider.stream(request())));
    expect(done).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    expect((done as { toolCalls: unknown[] }).toolCalls).toEqual([expect.objectContaining({ truncated: true })]);
  });

  it('a call whose arguments are whole JSON when the limit hits is whole (nothing more could follow it)', async () => {
    server.always((_req, res) =>
      sse(res, [toolStart(0, 'call_w', 'read_file'), toolArgs(0, '{"path":"a"}'), chunk({}, 'length'), DONE]),
    );
    const done = last(await collect(provider.stream(request())));
    expect((done as { toolCalls: unknown[] }).toolCalls).toEqual([
      { id: 'call_w', name: 'read_file', input: { path: 'a' } },
    ]);
  });

  it('[DONE] without finish_reason, arguments still open, output at the limit: truncated, not run', async () => {
    server.always((_req, res) =>
      sse(res, [toolStart(0, 'call_l', 'read_file'), toolArgs(0, '{"path":"a'), usageChunk(5, 8), DONE]),
    );
    const done = last(await collect(provider.stream(request({ maxOutputTokens: 8 }))));
    expect(done).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    expect((done as { toolCalls: unknown[] }).toolCalls).toEqual([expect.objectContaining({ truncated: true })]);
  });

  it('a malformed chunk before [DONE] is not retried once output has started', async () => {
    server.always((_req, res) =>
      raw(res, [line(chunk({ content: 'Hel' }).data), 'data: {not json\n\n', line('[DONE]')]),
    );
    const events = await collect(provider.stream(request()));
    expect(last(events)).toMatchObject({ type: 'error' });
    expect(server.requests).toHaveLength(1);
  });

  it('a malformed chunk on a reply with nothing emitted yet is not resent four times', async () => {
    server.always((_req, res) =>
      raw(res, [line(toolStart(0, 'call_m', 'read_file').data), 'data: {not json\n\n', line('[DONE]')]),
    );
    const events = await collect(provider.stream(request()));
    expect(last(events)).toMatchObject({ type: 'error' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('red team: the connection drops right after [DONE]', () => {
  it('a tool call with [DONE] and no finish_reason, then a reset: one request, the call kept', async () => {
    server.always((_req, res) =>
      sse(res, [toolStart(0, 'call_r', 'read_file'), toolArgs(0, '{"path":"a.md"}'), DONE], { cut: true }),
    );
    const events = await collect(provider.stream(request()));
    expect(server.requests).toHaveLength(1);
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'tool_use' });
  });

  it('text with a finish_reason and [DONE], then a reset: one request, the reply whole', async () => {
    server.always((_req, res) => sse(res, [chunk({ content: 'Done.' }, 'stop'), DONE], { cut: true }));
    const events = await collect(provider.stream(request()));
    expect(server.requests).toHaveLength(1);
    expect(last(events)).toMatchObject({ type: 'done', text: 'Done.', stopReason: 'end_turn' });
  });
});

describe('red team: a server that holds the connection open after [DONE]', () => {
  it('the reply ends at [DONE]; the client does not wait for the connection to close', async () => {
    server.always((_req, res) => sse(res, [chunk({ content: 'Done.' }, 'stop'), DONE], { hold: true }));
    const started = Date.now();
    const events = await Promise.race([
      collect(provider.stream(request())),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 3000)),
    ]);
    expect(events).not.toBe('hung');
    expect(last(events as Awaited<ReturnType<typeof collect>>)).toMatchObject({ type: 'done', text: 'Done.' });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
