import { describe, expect, it } from 'vitest';
import { createProvider } from '../../src/providers/registry';
import { collect, last, sse } from './fake-server';
import {
  messageStart,
  textStart,
  textDelta,
  blockStop,
  messageDelta,
  messageStop,
  FAST,
  request,
  server,
  provider,
  useAnthropicServer,
  sentKey,
} from './anthropic-harness';

useAnthropicServer();

describe('anthropic provider', () => {
  it('maps a multi-turn conversation: tool_use blocks, consecutive tool results in ONE user message', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(3),
        textStart(0),
        textDelta(0, 'Done.'),
        blockStop(0),
        messageDelta('max_tokens', 1),
        messageStop,
      ]),
    );
    const events = await collect(
      provider.stream(
        request({
          system: '',
          maxOutputTokens: 512,
          messages: [
            { role: 'user', content: 'Fix the TODOs' },
            {
              role: 'assistant',
              text: 'Looking.',
              toolCalls: [
                { id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
                { id: 'toolu_2', name: 'read_file', input: '{"path": ', parseError: 'arguments are not valid JSON' },
              ],
            },
            { role: 'tool', callId: 'toolu_1', toolName: 'read_file', content: '// TODO', isError: false },
            {
              role: 'tool',
              callId: 'toolu_2',
              toolName: 'read_file',
              content: 'validation error: not valid JSON',
              isError: true,
            },
            { role: 'assistant', text: '', toolCalls: [{ id: 'toolu_3', name: 'git_status', input: {} }] },
            { role: 'tool', callId: 'toolu_3', toolName: 'git_status', content: 'clean', isError: false },
            { role: 'user', content: 'Keep going' },
          ],
        }),
      ),
    );
    expect(last(events)).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(512);
    expect(body).not.toHaveProperty('system');
    expect(body.messages).toEqual([
      { role: 'user', content: 'Fix the TODOs' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '// TODO', is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'validation error: not valid JSON', is_error: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_3', name: 'git_status', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_3', content: 'clean', is_error: false },
          { type: 'text', text: 'Keep going' },
        ],
      },
    ]);
  });

  it('is reachable through createProvider with ANTHROPIC_BASE_URL and the key from env', async () => {
    server.enqueue((_req, res) =>
      sse(res, [
        messageStart(2),
        textStart(0),
        textDelta(0, 'hi'),
        blockStop(0),
        messageDelta('end_turn', 1),
        messageStop,
      ]),
    );
    const p = createProvider('anthropic:claude-test', {
      env: { ANTHROPIC_API_KEY: 'sk-ant-env', ANTHROPIC_BASE_URL: server.url },
      retry: FAST,
    });
    expect(p.id).toBe('anthropic:claude-test');
    const events = await collect(p.stream(request({ tools: [] })));
    expect(last(events)).toEqual({
      type: 'done',
      text: 'hi',
      toolCalls: [],
      usage: { inputTokens: 2, outputTokens: 1 },
      stopReason: 'end_turn',
    });
    expect(sentKey(server.requests[0]?.headers)).toBe('sk-ant-env');
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });
});
