import { describe, expect, it } from 'vitest';
import { initialPlanState, type PlanState } from '../../src/plan/plan-state';
import { globPattern, taskScopeErrors } from '../../src/plan/task-scope';

const executing = (task: Record<string, unknown>): PlanState => ({
  ...initialPlanState(),
  planMode: true,
  phase: 'executing',
  planId: 'p',
  tasks: [{ id: 't1', title: 'fix add', dependsOn: [], ...task }],
  status: { t1: 'running' },
  current: 't1',
});
const call = (tool: string, paths: string[] = [], readOnly = false) => ({
  tool,
  readOnly,
  paths,
  actor: 'model' as const,
});

describe('the task scope (deviations)', () => {
  it('while planning only reads and submit_plan pass', () => {
    const s = { ...initialPlanState(), planMode: true };
    expect(taskScopeErrors(s, call('read_file', ['a.js'], true))).toEqual([]);
    expect(taskScopeErrors(s, call('submit_plan'))).toEqual([]);
    const [e] = taskScopeErrors(s, call('edit_file', ['a.js']));
    expect(e).toMatchObject({ code: 'plan_deviation' });
    expect(e!.message).toMatch(/no plan is approved yet/);
  });

  it("a tool outside the task's tools is a deviation, naming the task and how to change the plan", () => {
    const [e] = taskScopeErrors(executing({ tools: ['read_file'] }), call('bash'));
    expect(e!.message).toMatch(/task t1 \[1\/1\] "fix add" may use only read_file; bash is outside it/);
    expect(e!.message).toMatch(/submit a new plan with submit_plan/);
    expect(taskScopeErrors(executing({ tools: ['read_file'] }), call('read_file', ['x'], true))).toEqual([]);
  });

  it("a change outside the task's paths is a deviation; reads elsewhere and gatehouse's own calls are not", () => {
    const s = executing({ paths: ['src/**'] });
    expect(taskScopeErrors(s, call('edit_file', ['src/math.js']))).toEqual([]);
    expect(taskScopeErrors(s, call('edit_file', ['src/a/b/c.js']))).toEqual([]);
    expect(taskScopeErrors(s, call('write_file', ['test/math.test.js']))[0]!.message).toMatch(
      /may change only src\/\*\*; test\/math.test.js is outside it/,
    );
    // The requested path inside, but it resolves outside (a symlink): refused.
    expect(taskScopeErrors(s, call('edit_file', ['src/link.js', 'secrets/key']))).toHaveLength(1);
    expect(taskScopeErrors(s, call('read_file', ['README.md'], true))).toEqual([]);
    expect(taskScopeErrors(s, { ...call('bash'), actor: 'runtime' })).toEqual([]);
  });

  it('globs: ** crosses directories, * and ? do not', () => {
    expect(globPattern('src/*.js').test('src/a.js')).toBe(true);
    expect(globPattern('src/*.js').test('src/a/b.js')).toBe(false);
    expect(globPattern('**/*.md').test('README.md')).toBe(true);
    expect(globPattern('./docs/?.md').test('docs/a.md')).toBe(true);
  });
});
