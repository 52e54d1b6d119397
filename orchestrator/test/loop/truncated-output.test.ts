import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import { AnthropicProvider } from '../../src/providers/anthropic';
import { OpenAIProvider } from '../../src/providers/openai';
import type { ModelProvider } from '../../src/providers/types';
import type { Budgets } from '../../src/run/budgets';
import { FakeServer, sse, type SseEvent } from '../providers/fake-server';
import * as a from '../providers/anthropic-harness';
import * as o from '../providers/openai-harness';
import { harness, trackedLog, type Harness } from '../tools/pipeline-harness';

/**
 * Truthful model output through the whole loop: the real providers read our own SSE fixtures from a
 * loopback server, the real pipeline runs over an in-memory sandbox, and the log is checked.
 */

const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 20 };

async function run(
  replies: SseEvent[][],
  make: (url: string) => ModelProvider,
  budgets: Partial<Budgets> = {},
): Promise<{ outcome: LoopOutcome; h: Harness; server: FakeServer; events: readonly EventEnvelope[] }> {
  const server = await FakeServer.start();
  try {
    for (const reply of replies) server.enqueue((_req, res) => sse(res, reply));
    const h = harness({ sandbox: { files: { 'notes.md': 'old\n' } } });
    const log = trackedLog(h);
    const outcome = await runLoop({
      provider: make(server.url),
      log,
      tracker: h.tracker,
      pipeline: h.pipeline,
      system: 'You are careful.',
      task: 'Update notes.md',
      tools: [],
      budgets: { maxTurns: 10, maxToolCalls: 10, maxTokens: 1_000_000, wallClockMs: 60_000, ...budgets },
      contextTokenBudget: 100_000,
      signal: new AbortController().signal,
    });
    return { outcome, h, server, events: h.log.events() };
  } finally {
    await server.close();
  }
}

const anthropic = (url: string) =>
  new AnthropicProvider({ model: 'claude-test', apiKey: 'sk-ant-test', baseUrl: url, retry: FAST });
const openai = (url: string) =>
  new OpenAIProvider({ model: 'gpt-test', apiKey: 'sk-test', baseUrl: `${url}/v1`, retry: FAST });

const cutText = [
  a.messageStart(30),
  a.textStart(0),
  a.textDelta(0, '{"'),
  a.blockStop(0),
  a.messageDelta('max_tokens', 1),
  a.messageStop,
];
const answer = (text: string) => [
  a.messageStart(40),
  a.textStart(0),
  a.textDelta(0, text),
  a.blockStop(0),
  a.messageDelta('end_turn', 5),
  a.messageStop,
];
const ofType = (events: readonly EventEnvelope[], type: string) => events.filter((e) => e.type === type);

describe('loop: replies cut off at the output limit', () => {
  it('a text reply cut off is not an answer: the model is told, sees its cut text, and answers again', async () => {
    const { outcome, events, server } = await run([cutText, answer('Nothing needed changing.')], anthropic);
    expect(outcome).toMatchObject({ status: 'final', answer: 'Nothing needed changing.' });
    expect(ofType(events, 'run.feedback').map((e) => e.data)).toEqual([
      expect.objectContaining({
        turn: 1,
        kind: 'truncated',
        reason: expect.stringMatching(/cut off at the output limit/) as unknown,
      }),
    ]);
    // The second request carries the cut-off text and, after it, the note.
    const second = server.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(second.messages.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'text', text: '{"' }] });
    expect(second.messages.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringMatching(/cut off/) as unknown,
    });
  });

  it('out of turns right after a cut-off reply: partial, decided by "truncated", with no answer', async () => {
    const { outcome } = await run([cutText], anthropic, { maxTurns: 1 });
    expect(outcome).toEqual({ status: 'partial', stopReason: 'max_turns', decidedBy: 'truncated' });
  });

  it('a tool call cut off is recorded truncated, refused at validation, never run, and the model told', async () => {
    const cutCall = [
      a.messageStart(30),
      a.toolStart(0, 'toolu_cut', 'write_file'),
      a.jsonDelta(0, '{"path": "notes.md", "content": "new first line\\nnew sec'),
      a.messageDelta('max_tokens', 20),
      a.messageStop,
    ];
    const { outcome, events, h, server } = await run([cutCall, answer('I could not write the notes.')], anthropic);
    expect(outcome).toMatchObject({ status: 'final' });
    const output = ofType(events, 'model.output')[0]?.data as { toolCalls: unknown[]; stopReason: string };
    expect(output.stopReason).toBe('max_tokens');
    expect(output.toolCalls).toEqual([expect.objectContaining({ callId: 'toolu_cut', truncated: true })]);
    expect(h.event('tool.validation', 'toolu_cut')).toMatchObject({
      ok: false,
      errors: [{ code: 'truncated' }],
    });
    expect(h.event('tool.observation', 'toolu_cut')).toMatchObject({ outcome: 'rejected' });
    expect(h.sandbox.executed()).toEqual([]);
    expect(h.sandbox.workspace.read(h.sandbox.workspace.resolve('notes.md'))).toBe('old\n');
    // The next request answers the call with the refusal, as the API requires.
    const second = JSON.stringify(server.requests[1]?.body);
    expect(second).toMatch(/"type":"tool_result","tool_use_id":"toolu_cut".*cut off at the output limit/);
  });

  it('an OpenAI-compatible [DONE] without finish_reason: one request, stop reason inferred and noted', async () => {
    const { outcome, events, server } = await run(
      [[o.role, o.chunk({ content: 'No change needed.' }), o.usageChunk(10, 4), o.DONE]],
      openai,
    );
    expect(outcome).toMatchObject({ status: 'final', answer: 'No change needed.' });
    expect(server.requests).toHaveLength(1);
    expect(ofType(events, 'model.output')[0]?.data).toMatchObject({
      stopReason: 'end_turn',
      retries: 0,
      stopNote: expect.stringMatching(/\[DONE\] but sent no finish_reason/) as unknown,
    });
  });
});
