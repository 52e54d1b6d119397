import { describe, expect, it } from 'vitest';
import { createProvider } from '../../src/providers/registry';
import { collect, last, sse } from './fake-server';
import { chunk, usageChunk, DONE, role, FAST, request, server, provider, useOpenAIServer } from './openai-harness';

useOpenAIServer();

describe('openai provider', () => {
  it('maps a multi-turn conversation with tool results, and the output limit', async () => {
    server.enqueue((_req, res) =>
      sse(res, [role, chunk({ content: 'Done.' }), chunk({}, 'length'), usageChunk(1, 1), DONE]),
    );
    const events = await collect(
      provider.stream(
        request({
          maxOutputTokens: 256,
          messages: [
            { role: 'user', content: 'Fix the TODOs' },
            {
              role: 'assistant',
              text: 'Looking.',
              toolCalls: [
                { id: 'call_1', name: 'grep', input: { pattern: 'TODO' } },
                { id: 'call_2', name: 'read_file', input: '{"path": ', parseError: 'arguments are not valid JSON' },
              ],
            },
            { role: 'tool', callId: 'call_1', toolName: 'grep', content: 'src/a.ts:3: TODO', isError: false },
            {
              role: 'tool',
              callId: 'call_2',
              toolName: 'read_file',
              content: 'validation error: arguments are not valid JSON',
              isError: true,
            },
            {
              role: 'assistant',
              text: '',
              toolCalls: [{ id: 'call_3', name: 'read_file', input: { path: 'src/a.ts' } }],
            },
            { role: 'tool', callId: 'call_3', toolName: 'read_file', content: '// TODO: fix', isError: false },
            { role: 'user', content: 'Keep going' },
          ],
        }),
      ),
    );
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.max_completion_tokens).toBe(256);
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are careful.' },
      { role: 'user', content: 'Fix the TODOs' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'grep', arguments: '{"pattern":"TODO"}' } },
          { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path": ' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'src/a.ts:3: TODO' },
      { role: 'tool', tool_call_id: 'call_2', content: 'validation error: arguments are not valid JSON' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_3', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_3', content: '// TODO: fix' },
      { role: 'user', content: 'Keep going' },
    ]);
  });

  it('is reachable through createProvider with OPENAI_BASE_URL and the key from env', async () => {
    server.enqueue((_req, res) => sse(res, [role, chunk({ content: 'hi' }), chunk({}, 'stop'), DONE]));
    const p = createProvider('openai:gpt-test', {
      env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${server.url}/v1` },
      retry: FAST,
    });
    const events = await collect(p.stream(request({ tools: [] })));
    // A compatible server that ignores include_usage: zero usage, still a result.
    expect(last(events)).toEqual({
      type: 'done',
      text: 'hi',
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      stopReason: 'end_turn',
    });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-env');
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });
});
