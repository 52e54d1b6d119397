import { describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { replayExitCode, replayRun } from '../../src/replay/replay-run';
import { policyFile, recordRun, type RunSpec } from './recorded-runs';

/**
 * Red team (issue 14): "exit 1 if an action that ran would now be denied, so CI can gate policy
 * changes on past runs". A run's actions include its sub-agents': a dry-run of the root that decides
 * only the root's own intents says `match` while a sub-agent's `npm test` ran and would now be denied.
 */
const files = { 'src/math.js': 'export const add = (a, b) => a - b;\n' };
const passes: RunSpec['exec'] = ({ command }) =>
  command === 'npm test' ? { exitCode: 0, output: 'pass 1\n' } : { exitCode: 127, output: 'not found\n' };
const AUTO = { mode: 'sandboxed-auto' };
const DENY_TESTS = { mode: 'sandboxed-auto', deny: ['bash(npm test*)'] };
const delegateTests = {
  name: 'delegate',
  input: {
    task: 'run the tests',
    tools: ['bash'],
    paths: ['src/**'],
    budget: { turns: 3, toolCalls: 3, tokens: 100_000, seconds: 60 },
    expect: 'whether they pass',
  },
};

describe('red team 14: dry-run of a run with sub-agents', () => {
  it("a sub-agent's call that ran and would now be denied makes the root's dry-run `denied` (exit 1)", async () => {
    const run = await recordRun({
      script: {
        turns: [{ toolCalls: [delegateTests] }, { final: 'The sub-agent ran the tests (obs-1).' }],
        children: [
          { turns: [{ toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] }, { final: 'pass (obs-1)' }] },
        ],
      },
      files,
      exec: passes,
      policy: AUTO,
    });
    const child = run.children()[0]!;
    expect(RunLog.readEvents(run.stateDir, child).some((e) => e.type === 'tool.execution.started')).toBe(true);
    // The child on its own is judged denied today ...
    const alone = await replayRun(child, {
      mode: 'dry-run',
      stateDir: run.stateDir,
      policyFile: policyFile(DENY_TESTS),
    });
    expect(alone.outcome.verdict).toBe('denied');
    // ... and so is the tree it is part of.
    const r = await replayRun(run.runId, {
      mode: 'dry-run',
      stateDir: run.stateDir,
      policyFile: policyFile(DENY_TESTS),
    });
    expect(r.outcome.verdict).toBe('denied');
    expect(replayExitCode(r.outcome)).toBe(1);
    const decisions = RunLog.readEvents(run.stateDir, r.replayRunId).flatMap((e) =>
      e.type === 'replay.decision' ? [e.data] : [],
    );
    expect(decisions.find((d) => d.tool === 'bash')).toMatchObject({
      ran: true,
      then: { decision: 'allow' },
      now: { decision: 'deny', rule: 'deny[0] bash(npm test*)' },
    });
    // The same policy as then: nothing changed anywhere in the tree.
    const same = await replayRun(run.runId, { mode: 'dry-run', stateDir: run.stateDir, policyFile: policyFile(AUTO) });
    expect(same.outcome).toMatchObject({ verdict: 'match', differed: 0 });
  });
});
