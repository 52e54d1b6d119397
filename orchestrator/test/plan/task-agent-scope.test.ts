import { describe, expect, it } from 'vitest';
import { checkHandoff, type AgentScope } from '../../src/agents/handoff';
import { initialPlanState, type PlanState } from '../../src/plan/plan-state';
import { taskAgentScope } from '../../src/plan/task-agent-scope';

const surface = ['read_file', 'edit_file', 'bash', 'delegate', 'submit_plan', 'complete_task'];
const executing = (task: Record<string, unknown>): PlanState => ({
  ...initialPlanState(),
  planMode: true,
  phase: 'executing',
  planId: 'p',
  tasks: [{ id: 't1', title: 'fix add in src/math.js', dependsOn: [], ...task }],
  status: { t1: 'running' },
  current: 't1',
});
const parent = (plan: PlanState): AgentScope => ({
  runId: 'run_parent',
  lineage: ['run_parent'],
  depth: 0,
  maxDepth: 2,
  ...taskAgentScope(plan, { surface, paths: ['**'] }),
  remaining: { turns: 10, toolCalls: 10, tokens: 1000, seconds: 100 },
  observations: new Set(),
});
const handoff = (tools: string[], paths: string[]) => ({
  task: 'fix it',
  expect: 'a fixed add',
  tools,
  paths,
  evidence: [],
  budget: { turns: 1, toolCalls: 1, tokens: 10, seconds: 1 },
});

describe('what a plan run may hand a sub-agent', () => {
  it('runs that are not plan runs hand what they have', () => {
    expect(taskAgentScope(initialPlanState(), { surface, paths: ['**'] })).toEqual({ surface, paths: ['**'] });
  });

  it('never the plan tools: a child cannot submit or end the parent plan', () => {
    const errors = checkHandoff(handoff(['submit_plan', 'complete_task'], ['**']), parent(executing({})));
    expect(errors.map((e) => [e.path, e.code])).toEqual([
      ['tools[0]', 'tool_not_delegable'],
      ['tools[1]', 'tool_not_delegable'],
    ]);
  });

  it("during a task, no tool outside the task's tools and no path outside its paths", () => {
    const p = parent(executing({ tools: ['edit_file', 'delegate'], paths: ['src/**'] }));
    expect(p.surface).toEqual(['edit_file', 'delegate']);
    expect(checkHandoff(handoff(['edit_file'], ['src/**']), p)).toEqual([]);
    const errors = checkHandoff(handoff(['bash', 'edit_file'], ['src/math.js', 'test/**']), p);
    expect(errors.map((e) => [e.path, e.code])).toEqual([
      ['tools[0]', 'tool_not_delegable'],
      ['paths[1]', 'path_outside_scope'],
    ]);
  });
});
