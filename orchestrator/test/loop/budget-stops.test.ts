import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProvider, runLoop, RunLog, StateTracker, type CallResult } from '../../src/index';
import type { Budgets } from '../../src/run/budgets';
import type { ModelPrice } from '../../src/usage/model-price';

/**
 * Budget stops over the real loop: a scripted model (usage is characters / 4), a real log and
 * state fold, a stand-in pipeline that observes every call as ok.
 */
function harness(turns: unknown[]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-budget-'));
  const file = path.join(dir, 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  const log = RunLog.create(dir, 'run_budget');
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
  const run = (
    budgets: Partial<Budgets>,
    extra: { price?: ModelPrice; childUsage?: () => { tokens: number; costUsd: number } } = {},
  ) =>
    runLoop({
      provider: createProvider(`scripted:${file}`),
      log: tee,
      tracker,
      pipeline,
      system: 's',
      task: 't',
      tools: [],
      budgets: { maxTurns: 50, maxToolCalls: 50, maxTokens: 1_000_000, wallClockMs: 600_000, ...budgets },
      contextTokenBudget: 100_000,
      signal: new AbortController().signal,
      ...extra,
    });
  const outputs = () => log.events().filter((e) => e.type === 'model.output');
  return { tee, run, outputs };
}

const call = { text: 'x'.repeat(4000), toolCalls: [{ name: 'list_files', input: {} }] };
// 4000 characters of text are 1000 output tokens: $1 a turn at $1000 per million output tokens.
const PRICE: ModelPrice = { input: 0, output: 1000 };

describe('cost budget', () => {
  it('stops before the model call that would begin over it: partial, decided by budget', async () => {
    const h = harness(Array(10).fill(call));
    const outcome = await h.run({ maxCostUsd: 2.5 }, { price: PRICE });
    expect(outcome).toEqual({ status: 'partial', stopReason: 'cost_budget', decidedBy: 'budget' });
    expect(h.outputs()).toHaveLength(3);
    for (const e of h.outputs()) {
      const u = e.type === 'model.output' ? e.data.usage : undefined;
      expect(u?.costUsd).toBeCloseTo(1.004, 2);
      expect(u).not.toHaveProperty('cachedInputTokens');
    }
  });

  it('records no cost without a price, and a cost budget then never stops the run', async () => {
    const h = harness([call, call, { final: 'done (obs-1)' }]);
    const outcome = await h.run({ maxCostUsd: 0.01 });
    expect(outcome.status).toBe('final');
    for (const e of h.outputs()) expect(e.type === 'model.output' && e.data.usage).not.toHaveProperty('costUsd');
  });

  it("counts the sub-agents' cost and tokens: a parent whose children spent its budget stops", async () => {
    const h = harness([call]);
    expect(await h.run({ maxCostUsd: 4 }, { price: PRICE, childUsage: () => ({ tokens: 0, costUsd: 5 }) })).toEqual({
      status: 'partial',
      stopReason: 'cost_budget',
      decidedBy: 'budget',
    });
    const t = harness([call]);
    expect(await t.run({ maxTokens: 100 }, { childUsage: () => ({ tokens: 100, costUsd: 0 }) })).toMatchObject({
      stopReason: 'token_budget',
      decidedBy: 'budget',
    });
    expect(h.outputs()).toHaveLength(0);
  });
});

describe('token, turn, tool-call and wall budgets are decided by budget too', () => {
  it('token budget', async () => {
    const h = harness(Array(10).fill(call));
    expect(await h.run({ maxTokens: 2000 })).toEqual({
      status: 'partial',
      stopReason: 'token_budget',
      decidedBy: 'budget',
    });
  });

  it('wall time counts the stretches the run was driven before (a resumed run does not start afresh)', async () => {
    const h = harness([call, { final: 'done (obs-1)' }]);
    const at = (s: number) => ({ ts: new Date(Date.now() - 3_600_000 + s * 1000) });
    h.tee.append('sandbox.started', 'runtime', { sandboxId: 'sb_a', containerId: 'c', image: 'i', timings: {} }, at(0));
    h.tee.append('run.paused', 'runtime', { pending: [], workspace: { dir: null, files: [], deleted: [] } }, at(61));
    h.tee.append('run.resumed', 'user', { fromSeq: 1, workspaceFrom: 'checkpoint', files: [] }, at(3000));
    h.tee.append('sandbox.started', 'runtime', { sandboxId: 'sb_b', containerId: 'c', image: 'i', timings: {} });
    expect(await h.run({ wallClockMs: 60_000 })).toEqual({
      status: 'partial',
      stopReason: 'wall_clock',
      decidedBy: 'budget',
    });
    expect(h.outputs()).toHaveLength(0);
    // The 48 minutes paused between the stretches do not count: with 2 minutes the run goes on.
    expect((await h.run({ wallClockMs: 120_000 })).status).toBe('final');
  });
});
