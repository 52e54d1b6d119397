import type { EventEnvelope, PlanTask } from '@gatehouse/shared';
import { describe, expect, it } from 'vitest';
import { approvedScope } from '../../src/plan/approved-scope';
import { changedOutsideTask } from '../../src/plan/changed-outside-task';
import { classifyFailure } from '../../src/plan/classify-failure';
import { initialPlanState, type PlanState } from '../../src/plan/plan-state';

const ev = (type: string, data: Record<string, unknown>) => ({ type, data }) as unknown as EventEnvelope;
const task = (id: string, paths?: string[]): PlanTask => ({
  id,
  title: `change ${id}`,
  dependsOn: [],
  ...(paths ? { paths } : {}),
});
const started = ev('run.started', { planMode: true });
const created = (planId: string, tasks: PlanTask[]) => ev('plan.created', { planId, tasks });
const gate = (planId: string, status: string, tasks?: PlanTask[]) =>
  ev('plan.gate', { planId, status, ...(tasks ? { tasks } : {}) });

describe('the approved scope at write-back', () => {
  it('is no judge of runs that are not plan runs', () => {
    expect(approvedScope([ev('run.started', {})])).toBeUndefined();
  });

  it('refuses everything when no plan was approved', () => {
    const scope = approvedScope([started, created('p1', [task('t1', ['src/**'])]), gate('p1', 'rejected')]);
    expect(scope?.('src/a.js')).toMatch(/no plan was approved/);
  });

  it("refuses a path no approved task covers, naming the plan's paths; skipped tasks grant nothing", () => {
    const tasks = [task('t1', ['src/**']), task('t2', ['docs/*.md'])];
    const scope = approvedScope([started, created('p1', tasks), gate('p1', 'modified', [tasks[0]!])]);
    expect(scope?.('src/deep/a.js')).toBeUndefined();
    expect(scope?.('docs/a.md')).toMatch(/outside the approved plan's paths \(src\/\*\*\)/);
    expect(scope?.('package.json')).toMatch(/apply it by hand/);
  });

  it('covers every plan approved in the run (a new plan mid-run keeps what the first one allowed)', () => {
    const events = [
      started,
      created('p1', [task('t1', ['a.js'])]),
      gate('p1', 'approved'),
      created('p2', [task('t2', ['b.js'])]),
      gate('p2', 'approved'),
    ];
    const scope = approvedScope(events);
    expect([scope?.('a.js'), scope?.('b.js')]).toEqual([undefined, undefined]);
    expect(scope?.('c.js')).toMatch(/a\.js, b\.js/);
  });

  it('is unbounded when an approved task has no paths', () => {
    const events = [started, created('p1', [task('t1', ['a.js']), task('t2')]), gate('p1', 'approved')];
    expect(approvedScope(events)).toBeUndefined();
  });
});

describe("a command that changed files outside its task's paths", () => {
  const plan = (paths?: string[]): PlanState => ({
    ...initialPlanState(),
    planMode: true,
    phase: 'executing',
    planId: 'p1',
    tasks: [task('t1', paths)],
    status: { t1: 'running' },
    current: 't1',
  });
  const run = (changed: string[]) => [
    ev('tool.intent', { callId: 'c1' }),
    ev('tool.execution.completed', { callId: 'c1', filesChanged: changed }),
  ];

  it('fails the task as a deviation the plan did not permit, classified permission', () => {
    const f = changedOutsideTask(plan(['src/**']), 'c1', 'bash', run(['src/a.js', 'package.json', 'x/y.js']));
    expect(f?.kind === 'call' && f.content).toMatch(
      /bash changed package\.json, x\/y\.js, outside task t1's approved paths \(src\/\*\*\)/,
    );
    expect(classifyFailure(f!).class).toBe('permission');
  });

  it('passes changes inside the paths, tasks without paths, and calls that changed nothing', () => {
    expect(changedOutsideTask(plan(['src/**']), 'c1', 'bash', run(['src/a.js']))).toBeUndefined();
    expect(changedOutsideTask(plan(), 'c1', 'bash', run(['anything.js']))).toBeUndefined();
    expect(changedOutsideTask(plan(['src/**']), 'c1', 'bash', run([]))).toBeUndefined();
  });
});
