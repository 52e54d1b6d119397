import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import { OpenAIProvider } from '../../src/providers/openai';
import type { Budgets } from '../../src/run/budgets';
import { FakeServer, sse, type SseEvent } from '../providers/fake-server';
import * as o from '../providers/openai-harness';
import { harness, trackedLog, type Harness } from '../tools/pipeline-harness';

/**
 * Red team (issue 13) through the whole loop: a compatible server that always cuts its reply off,
 * or that answers with nothing but [DONE]. Neither may end `final`, and every request is counted.
 */
async function run(
  reply: SseEvent[],
  budgets: Partial<Budgets>,
): Promise<{ outcome: LoopOutcome; server: FakeServer; events: readonly EventEnvelope[] }> {
  const server = await FakeServer.start();
  try {
    server.always((_req, res) => sse(res, reply));
    const h: Harness = harness({ sandbox: { files: { 'notes.md': 'old\n' } } });
    const log = trackedLog(h);
    const outcome = await runLoop({
      provider: new OpenAIProvider({
        model: 'gpt-test',
        apiKey: 'sk-test',
        baseUrl: `${server.url}/v1`,
        retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 },
      }),
      log,
      tracker: h.tracker,
      pipeline: h.pipeline,
      system: 'You are careful.',
      task: 'Update notes.md',
      tools: [],
      budgets: { maxTurns: 6, maxToolCalls: 10, maxTokens: 1_000_000, wallClockMs: 60_000, ...budgets },
      contextTokenBudget: 100_000,
      signal: new AbortController().signal,
    });
    return { outcome, server, events: h.log.events() };
  } finally {
    await server.close();
  }
}

describe('red team: truthful model output through the loop', () => {
  it('a model cut off on every reply is bounded by the turn budget and never final', async () => {
    const cut = [o.chunk({ content: 'All tests pass' }), o.chunk({}, 'length'), o.usageChunk(10, 4), o.DONE];
    const { outcome, server, events } = await run(cut, { maxTurns: 5 });
    expect(outcome).toEqual({ status: 'partial', stopReason: 'max_turns', decidedBy: 'truncated' });
    expect(server.requests).toHaveLength(5);
    expect(events.filter((e) => e.type === 'run.feedback')).toHaveLength(5);
  });

  it('a model cut off on every reply is bounded by the token budget too', async () => {
    const cut = [o.chunk({ content: 'Done' }), o.chunk({}, 'length'), o.usageChunk(400, 100), o.DONE];
    const { outcome, server } = await run(cut, { maxTurns: 50, maxTokens: 1200 });
    expect(outcome).toMatchObject({ status: 'partial', decidedBy: 'truncated' });
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });

  it('a server that answers only [DONE] fails the run after one request; no empty final answer', async () => {
    const { outcome, server } = await run([o.DONE], {});
    expect(outcome.status).toBe('failed');
    expect(outcome.stopReason).toMatch(/\[DONE\] after no text/);
    expect(server.requests).toHaveLength(1);
  });
});

describe('red team: replies that did not end, or said nothing', () => {
  it("a reply stopped by the provider's content filter is never final, whatever it claims", async () => {
    const filtered = [
      o.chunk({ content: 'The change is in place and the b' }),
      o.chunk({}, 'content_filter'),
      o.usageChunk(10, 4),
      o.DONE,
    ];
    const { outcome, events } = await run(filtered, { maxTurns: 3 });
    expect(outcome).toEqual({ status: 'partial', stopReason: 'max_turns', decidedBy: 'truncated' });
    const feedback = events.filter((e) => e.type === 'run.feedback').map((e) => e.data as { kind: string });
    expect(feedback.map((f) => f.kind)).toEqual(['filtered', 'filtered', 'filtered']);
    const outputs = events.filter((e) => e.type === 'model.output').map((e) => e.data as { stopReason: string });
    expect(outputs.map((d) => d.stopReason)).toEqual(['filtered', 'filtered', 'filtered']);
  });

  it('an empty reply with no tool call goes back once, then the run ends partial', async () => {
    const empty = [o.chunk({ content: '' }), o.chunk({}, 'stop'), o.usageChunk(10, 1), o.DONE];
    const { outcome, server, events } = await run(empty, { maxTurns: 10 });
    expect(outcome).toEqual({ status: 'partial', stopReason: 'empty_answer', answer: '', decidedBy: 'claims' });
    expect(server.requests).toHaveLength(2);
    const feedback = events.filter((e) => e.type === 'run.feedback').map((e) => e.data as { kind: string });
    expect(feedback.map((f) => f.kind)).toEqual(['contract']);
  });
});

describe('red team: a stream that goes quiet and stays open', () => {
  it('is bounded by the wall-clock budget: partial, one request, within the budget', async () => {
    const server = await FakeServer.start();
    try {
      server.always((_req, res) => sse(res, [o.chunk({ content: 'Thinking' })], { hold: true }));
      const h = harness({});
      const log = trackedLog(h);
      const started = Date.now();
      const outcome = await Promise.race([
        runLoop({
          provider: new OpenAIProvider({ model: 'gpt-test', apiKey: 'sk-test', baseUrl: `${server.url}/v1` }),
          log,
          tracker: h.tracker,
          pipeline: h.pipeline,
          system: 'You are careful.',
          task: 'Update notes.md',
          tools: [],
          budgets: { maxTurns: 5, maxToolCalls: 5, maxTokens: 1_000_000, wallClockMs: 600 },
          contextTokenBudget: 100_000,
          signal: new AbortController().signal,
        }),
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5000)),
      ]);
      expect(outcome).toEqual({ status: 'partial', stopReason: 'wall_clock', decidedBy: 'budget' });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
