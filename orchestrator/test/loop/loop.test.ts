import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProvider, runLoop, RunLog, StateTracker, type CallResult } from '../../src/index';

/**
 * The stop policy is pure logic over the loop: a real scripted model and a real log, with a
 * stand-in pipeline (the pipeline itself is tested against real sandboxes elsewhere).
 */
function setup(
  turns: unknown[],
  budgets: Partial<{ maxTurns: number; maxToolCalls: number; maxTokens: number; wallClockMs: number }>,
  slowMs = 0,
) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-loop-'));
  const file = path.join(dir, 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  const log = RunLog.create(dir, 'run_loop');
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
      if (slowMs) await new Promise((r) => setTimeout(r, slowMs));
      const id = `obs-${++n}`;
      tee.append('tool.observation', 'runtime', {
        callId: call.callId,
        observationId: id,
        tool: String(call.tool),
        outcome: 'ok',
        content: 'fine',
        truncated: false,
      });
      return {
        kind: 'observed',
        observation: {
          id,
          callId: call.callId,
          tool: String(call.tool),
          outcome: 'ok',
          content: 'fine',
          truncated: false,
        },
      };
    },
    continueCall: async () => undefined,
  };
  return () =>
    runLoop({
      provider: createProvider(`scripted:${file}`),
      log: tee,
      tracker,
      pipeline,
      system: 's',
      task: 't',
      tools: [],
      budgets: { maxTurns: 50, maxToolCalls: 50, maxTokens: 1_000_000, wallClockMs: 60_000, ...budgets },
      contextTokenBudget: 100_000,
      signal: new AbortController().signal,
    });
}

const call = { toolCalls: [{ name: 'list_files', input: {} }] };

describe('loop stop policy', () => {
  it('token budget', async () => {
    const outcome = await setup(Array(10).fill({ text: 'x'.repeat(4000), ...call }), { maxTokens: 2000 })();
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'token_budget' });
  });

  it('wall-clock budget', async () => {
    const outcome = await setup(Array(50).fill(call), { wallClockMs: 300 }, 100)();
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'wall_clock' });
  });

  it('a final answer with citations that hold ends the run final', async () => {
    // "it works" needs a command that ran (claims are judged one by one, docs/claims.md): a bash call, not list_files.
    const ran = { toolCalls: [{ name: 'bash', input: { command: 'node index.js' } }] };
    const outcome = await setup([ran, { final: 'Ran it (obs-1); it works.' }], {})();
    expect(outcome).toMatchObject({ status: 'final', stopReason: 'final_answer', decidedBy: 'answer' });
  });
});
