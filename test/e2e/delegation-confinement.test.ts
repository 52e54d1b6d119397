import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repo, run, budget, handoff, observations } from '../support/delegation';

/**
 * Sub-agents through the real CLI: what a child may do is never more than its parent handed it.
 */
describe('sub-agents (real CLI, real sandboxes)', () => {
  it('a handoff cannot widen anything: extra fields, tools, budget, paths and depth are refused', () => {
    const dir = repo({ 'src/a.js': 'export const a = 1;\n', 'src/b.js': 'export const b = 1;\n' });
    const script = {
      turns: [
        { toolCalls: [handoff('x', ['read_file'], ['src/**'], { mode: 'sandboxed-auto' })] },
        { toolCalls: [handoff('x', ['read_file'], ['src/**'], { budget: { ...budget, turns: 100 } })] },
        { toolCalls: [handoff('x', ['read_file'], ['../outside/**'])] },
        {
          toolCalls: [
            handoff('nested', ['read_file', 'delegate'], ['src/a.js'], {
              budget: { ...budget, turns: 20, toolCalls: 20 },
            }),
          ],
        },
        { final: 'done' },
      ],
      children: [
        {
          turns: [
            // Not a subset of its own tools; outside its paths; then too deep (depth 2 → 3).
            { toolCalls: [handoff('x', ['bash'], ['src/a.js'])] },
            { toolCalls: [handoff('x', ['read_file'], ['src/b.js'])] },
            {
              toolCalls: [
                handoff('grandchild', ['read_file', 'delegate'], ['src/a.js'], {
                  budget: { ...budget, turns: 10, toolCalls: 10, tokens: 50_000, seconds: 60 },
                }),
              ],
            },
            { final: 'tried' },
          ],
          children: [
            {
              turns: [
                {
                  toolCalls: [
                    handoff('too deep', ['read_file'], ['src/a.js'], {
                      budget: { ...budget, turns: 2, toolCalls: 2, tokens: 10_000, seconds: 30 },
                    }),
                  ],
                },
                { final: 'tried' },
              ],
            },
          ],
        },
      ],
    };
    const { parent, logOf } = run(dir, script, ['--max-turns', '50']);
    const rejected = parent
      .filter((e) => e.type === 'tool.validation' && e.data.ok === false)
      .map((e) => (e.data.errors as Array<{ code: string; path: string }>)[0]);
    expect(rejected).toEqual([
      expect.objectContaining({ code: 'unrecognized_keys' }),
      expect.objectContaining({ code: 'budget_exceeds_parent', path: 'budget.turns' }),
      expect.objectContaining({ code: 'path_outside_scope' }),
    ]);
    const childId = String(parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
    const child = logOf(childId);
    const childRejected = child
      .filter((e) => e.type === 'tool.validation' && e.data.ok === false)
      .map((e) => (e.data.errors as Array<{ code: string }>)[0]!.code);
    expect(childRejected).toEqual(['tool_not_delegable', 'path_outside_scope']);
    const grandchildId = String(
      child.find((e) => e.type === 'agent.spawned' && e.runId === childId && e.data.parentRunId === childId)!.data
        .childRunId,
    );
    const grandchild = logOf(grandchildId);
    expect(grandchild.find((e) => e.type === 'tool.validation' && e.data.ok === false)!.data.errors).toEqual([
      expect.objectContaining({ code: 'depth_exceeded' }),
    ]);
    expect(grandchild[0]!.data).toMatchObject({ lineage: [parent[0]!.runId, childId, grandchildId] });
  });

  it('budgets handed out are spent: parallel children cannot together take more than the parent has left', () => {
    const dir = repo({ 'src/a.js': 'x\n' });
    const six = { budget: { ...budget, turns: 6, toolCalls: 6 } };
    const script = {
      turns: [
        { toolCalls: [handoff('one', ['list_files'], ['**'], six), handoff('two', ['list_files'], ['**'], six)] },
        { toolCalls: [handoff('three', ['list_files'], ['**'], six)] },
        { final: 'done' },
      ],
      children: [{ turns: [{ final: 'nothing to do' }] }, { turns: [{ final: 'nothing to do' }] }],
    };
    const { parent } = run(dir, script, ['--max-turns', '10']);
    const obs = observations(parent).filter((o) => o.callId === 'call_0_0' || o.callId === 'call_0_1');
    // Both parallel calls passed validation against the same remainder (9 turns); the runner
    // counts the first one's 6 before starting the second.
    expect(obs.map((o) => o.outcome).sort()).toEqual(['failed', 'ok']);
    expect(obs.find((o) => o.outcome === 'failed')!.content).toContain('budget_exceeds_parent');
    expect(parent.filter((e) => e.type === 'agent.spawned')).toHaveLength(1);
    // Later, validation itself counts what was handed out: 10 - 2 turns used - 6 handed = 2.
    const third = parent
      .filter((e) => e.type === 'tool.validation' && e.data.ok === false)
      .map((e) => (e.data.errors as Array<{ code: string; message: string }>)[0]!);
    expect(third).toEqual([expect.objectContaining({ code: 'budget_exceeds_parent' })]);
  });

  it(
    "inside, a child cannot use other tools, touch other paths, outlive its budget, or read the parent's " +
      'transcript; changes outside its paths are withheld',
    () => {
      const dir = repo({ 'src/a.js': 'export const a = 1;\n', 'src/b.js': 'export const b = 1;\n' });
      // First run only learns the ref of an artifact the parent's transcript holds (content-addressed).
      const big = { toolCalls: [{ name: 'bash', input: { command: 'seq 1 20000' } }] };
      const probe = run(dir, { turns: [big, { final: 'x' }] });
      const ref = String(observations(probe.parent)[0]!.content.match(/art-[0-9a-f]{16}/)![0]);
      const script = {
        turns: [
          big,
          {
            toolCalls: [
              handoff('work on a', ['read_file', 'read_artifact', 'bash'], ['src/a.js'], {
                budget: { ...budget, turns: 6, toolCalls: 6 },
              }),
            ],
          },
          { final: 'done' },
        ],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'edit_file', input: { path: 'src/a.js', oldText: 'a = 1', newText: 'a = 3' } }] },
              { toolCalls: [{ name: 'read_file', input: { path: 'src/b.js' } }] },
              { toolCalls: [{ name: 'read_artifact', input: { ref } }] },
              {
                toolCalls: [
                  {
                    name: 'read_file',
                    input: { path: path.join(probe.stateDir, 'runs', probe.rootId, 'events.jsonl') },
                  },
                ],
              },
              {
                toolCalls: [
                  {
                    name: 'bash',
                    input: { command: "sed -i 's/b = 1/b = 9/' src/b.js && sed -i 's/a = 1/a = 4/' src/a.js" },
                  },
                ],
              },
              { toolCalls: [{ name: 'read_file', input: { path: 'src/a.js' } }] },
              { final: 'never reached: the budget is 6 turns' },
            ],
          },
        ],
      };
      const { parent, logOf } = run(dir, script);
      const childId = String(parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
      const child = observations(logOf(childId));
      expect(child.map((o) => o.outcome)).toEqual(['rejected', 'denied', 'failed', 'rejected', 'ok', 'ok']);
      expect(child[0]!.content).toContain('not available in this run');
      expect(child[1]!.content).toContain("outside this sub-agent's paths");
      expect(child[2]!.content).toContain(ref);
      // The parent's log file on the host: outside the workspace, refused at validation before any policy.
      expect(child[3]!.content).toContain('outside the workspace');
      const completed = parent.find((e) => e.type === 'agent.completed')!.data;
      expect(completed).toMatchObject({ status: 'partial', stopReason: 'max_turns', withheld: ['src/b.js'] });
      // What the child was refused is part of the lineage, in both logs.
      expect(completed.denied).toEqual(['read_file: denied by handoff:paths']);
      expect(logOf(childId).find((e) => e.type === 'agent.completed')!.data.denied).toEqual(completed.denied);
      const delegateObs = observations(parent).find((o) => o.tool === 'delegate')!;
      expect(delegateObs.outcome).toBe('failed');
      expect(delegateObs.content).toContain('sub_agent_partial');
      expect(delegateObs.content).toContain('withheld (outside its paths, not applied): src/b.js');
      // src/a.js (inside its paths) came back through the parent's write path; src/b.js did not.
      expect(parent.at(-1)!.data).toMatchObject({ status: 'final', filesChanged: ['src/a.js'] });
    },
  );
});
