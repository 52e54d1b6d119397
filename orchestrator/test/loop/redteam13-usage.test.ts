import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoop, RunLog, StateTracker, type CallResult } from '../../src/index';
import type { ModelEvent, ModelProvider, Usage } from '../../src/providers/types';
import type { ModelPrice } from '../../src/usage/model-price';

/**
 * Red team, issue 13: a provider (a compatible server anyone can point --model at, or a proxy in
 * between) reports usage that is negative, NaN, infinite or fractional. Budgets are sums of what
 * it reports: a negative figure paid back earlier turns, NaN made every comparison false, and the
 * run went on past its token and cost budgets without end.
 */
function provider(usage: Usage): ModelProvider {
  return {
    id: 'hostile',
    async *stream(): AsyncIterable<ModelEvent> {
      await Promise.resolve();
      yield {
        type: 'done',
        text: 'x',
        toolCalls: [{ id: 'c', name: 'list_files', input: {} }],
        usage,
        stopReason: 'tool_use',
      };
    },
  };
}

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

function harness() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rt13-usage-'));
  made.push(dir);
  const log = RunLog.create(dir, 'run_rt13');
  const tracker = new StateTracker();
  const tee = {
    append: ((...a: Parameters<RunLog['append']>) => {
      const e = log.append(...a);
      tracker.apply(e);
      return e;
    }) as RunLog['append'],
    sync: () => log.sync(),
    redact: (t: string) => t,
    artifacts: log.artifacts,
    events: () => log.events(),
  };
  let n = 0;
  const pipeline = {
    run: async (call: { callId: string; tool: unknown }): Promise<CallResult> => {
      const id = `obs-${++n}`;
      const observation = { callId: call.callId, tool: String(call.tool), outcome: 'ok' as const, content: 'fine' };
      tee.append('tool.observation', 'runtime', { ...observation, observationId: id, truncated: false });
      return { kind: 'observed', observation: { ...observation, id, truncated: false } };
    },
    continueCall: async () => undefined,
  };
  return { tee, tracker, pipeline, log };
}

const PRICE: ModelPrice = { input: 1000, output: 1000 };

async function drive(usage: Usage) {
  const h = harness();
  const outcome = await runLoop({
    provider: provider(usage),
    log: h.tee,
    tracker: h.tracker,
    pipeline: h.pipeline,
    system: 's',
    task: 't',
    tools: [],
    // Enough turns that only a token or cost budget can stop it early.
    budgets: { maxTurns: 40, maxToolCalls: 40, maxTokens: 5000, maxCostUsd: 5, wallClockMs: 600_000 },
    contextTokenBudget: 100_000,
    signal: new AbortController().signal,
    price: PRICE,
  });
  const outputs = h.log.events().filter((e) => e.type === 'model.output');
  return { outcome, outputs, usage: h.tracker.state.usage };
}

describe('redteam13: usage a provider reports is not taken on trust', () => {
  it.each([
    ['negative', { inputTokens: -1_000_000, outputTokens: 2000 }],
    ['NaN', { inputTokens: Number.NaN, outputTokens: 2000 }],
    ['negative output', { inputTokens: 2000, outputTokens: -1_000_000 }],
    ['negative cached', { inputTokens: 2000, outputTokens: 0, cachedInputTokens: -1_000_000 }],
  ])('%s usage cannot keep a run past its token budget', async (_name, usage) => {
    const r = await drive(usage);
    expect(r.outcome.stopReason).toBe('token_budget');
    expect(r.outputs.length).toBeLessThanOrEqual(3);
    for (const e of r.outputs) {
      const u = e.type === 'model.output' ? e.data.usage : undefined;
      for (const v of [u?.inputTokens, u?.outputTokens, u?.cachedInputTokens ?? 0, u?.costUsd ?? 0]) {
        expect(Number.isFinite(v) && v! >= 0).toBe(true);
      }
    }
  });

  it('an infinite figure ends the run on its budget, and the log stays readable', async () => {
    const r = await drive({ inputTokens: Number.POSITIVE_INFINITY, outputTokens: 0 });
    expect(['token_budget', 'cost_budget']).toContain(r.outcome.stopReason);
    expect(r.outputs.length).toBe(1);
  });
});
