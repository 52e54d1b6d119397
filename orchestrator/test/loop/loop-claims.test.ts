import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf } from '@gatehouse/shared';
import { StateTracker } from '../../src/events/state';
import { runLoop } from '../../src/loop/loop';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import { tee } from '../../src/run/tee';
import { MemorySandbox, TestLog } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline } from '../../src/tools/pipeline';
import { ALL_TOOLS, LIMITS, policyOf } from '../tools/pipeline-harness';

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

/**
 * The loop with the scripted model and the real pipeline over an in-memory sandbox: `npm test`
 * fails (exit 1), and the policy denies editing index.js.
 */
async function run(script: Script) {
  const log = new TestLog();
  logs.push(log);
  log.append('run.started', 'user', { task: 'fix it', mode: 'sandboxed-auto', surface: ALL_TOOLS });
  const tracker = new StateTracker(log.events());
  const teed = tee(log.log, tracker);
  const registry = codingTools();
  const sandbox = new MemorySandbox({
    files: { 'sum.js': 'export const sum = (a, b) => a - b;\n', 'index.js': 'x\n' },
    exec: ({ command }) =>
      command === 'npm test' ? { exitCode: 1, output: 'fail 1\n' } : { exitCode: 127, output: 'no\n' },
  });
  const pipeline = new ToolPipeline({
    log: teed,
    tracker,
    registry,
    surface: ALL_TOOLS,
    policy: policyOf({ deny: ['edit_file(index.js)'] }),
    sandbox,
    limits: LIMITS,
  });
  const outcome = await runLoop({
    provider: new ScriptedProvider(script),
    log: teed,
    tracker,
    pipeline,
    system: 'test',
    task: 'fix it',
    tools: registry.describe(ALL_TOOLS),
    budgets: { maxTurns: 10, maxToolCalls: 10, maxTokens: 1_000_000, wallClockMs: 600_000 },
    contextTokenBudget: 100_000,
    signal: new AbortController().signal,
  });
  const feedback = log.events().filter((e): e is EventOf<'run.feedback'> => e.type === 'run.feedback');
  return { outcome, feedback: feedback.map((e) => e.data), log };
}

const READ_AND_TEST = [
  { toolCalls: [{ name: 'read_file', input: { path: 'sum.js' } }] },
  { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
];

describe('the loop judges the final answer claim by claim', () => {
  it('a failed test run claimed as passing is sent back once with the claims, then the run ends partial', async () => {
    const { outcome, feedback } = await run({
      turns: [
        ...READ_AND_TEST,
        { final: 'I read sum.js (obs-1). All tests pass (obs-2).' },
        { final: 'All tests pass (obs-2), as I said.' },
      ],
    });
    expect(feedback).toHaveLength(1);
    expect(feedback[0]).toMatchObject({
      turn: 3,
      kind: 'contract',
      claims: [
        { claim: 'I read sum.js (obs-1).', cites: ['obs-1'], supported: true },
        { claim: 'All tests pass (obs-2).', cites: ['obs-2'], supported: false },
      ],
    });
    expect(feedback[0]!.claims![1]!.reason).toMatch(/obs-2, which shows a failure \(exit code 1\)/);
    expect(feedback[0]!.reason).toMatch(/All tests pass \(obs-2\)/);
    expect(outcome).toEqual({
      status: 'partial',
      stopReason: 'unsupported_final',
      answer: 'All tests pass (obs-2), as I said.',
      decidedBy: 'claims',
    });
  });

  it('a denied edit claimed as the fix is sent back; an honest second answer ends final', async () => {
    const { outcome, feedback } = await run({
      turns: [
        { toolCalls: [{ name: 'read_file', input: { path: 'index.js' } }] },
        { toolCalls: [{ name: 'edit_file', input: { path: 'index.js', oldText: 'x', newText: 'y' } }] },
        { final: 'Fixed the bug in index.js (obs-2)' },
        { final: 'I could not edit index.js: the edit was denied (obs-2).' },
      ],
    });
    expect(feedback).toHaveLength(1);
    expect(feedback[0]!.claims).toMatchObject([
      { claim: 'Fixed the bug in index.js (obs-2)', cites: ['obs-2'], supported: false },
    ]);
    expect(feedback[0]!.claims![0]!.reason).toMatch(
      /refusal \(edit_file was denied\); index\.js did not change in this run/,
    );
    expect(outcome).toMatchObject({ status: 'final', stopReason: 'final_answer', decidedBy: 'answer' });
  });

  it('an honest answer about a failing run is accepted at once', async () => {
    const { outcome, feedback } = await run({
      turns: [...READ_AND_TEST, { final: 'I read sum.js (obs-1); the tests still fail (obs-2).' }],
    });
    expect(feedback).toEqual([]);
    expect(outcome).toMatchObject({ status: 'final', decidedBy: 'answer' });
  });
});
