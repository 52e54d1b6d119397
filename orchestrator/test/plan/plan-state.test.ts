import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { fold } from '../../src/events/state';
import { currentTask, nextTask } from '../../src/plan/plan-state';

let seq = 0;
const ev = (type: string, data: Record<string, unknown>): EventEnvelope =>
  ({ type, data, seq: seq++, id: `e${seq}`, ts: new Date().toISOString(), runId: 'run_x', parentRunId: null }) as never;
const task = (id: string, dependsOn: string[] = []) => ({ id, title: `do ${id}`, dependsOn });
const tasks = [task('t1'), task('t2', ['t1']), task('t3', ['t2'])];
const created = (planId: string, version = 1) =>
  ev('plan.created', { planId, callId: 'c1', version, tasks, dependencies: [] });

describe('the plan fold', () => {
  it('follows a plan from planning through the gate to execution and its end', () => {
    seq = 0;
    const start = ev('run.started', { task: 'g', mode: 'confirm-novel', surface: [], planMode: true });
    let s = fold([start]);
    expect(s.plan).toMatchObject({ planMode: true, phase: 'planning' });
    s = fold([created('plan_a'), ev('plan.gate', { planId: 'plan_a', status: 'requested', requestId: 'apr_1' })], s);
    expect(s.plan).toMatchObject({ phase: 'gate', version: 1, requested: true, tasks: [] });
    s = fold([ev('plan.gate', { planId: 'plan_a', status: 'approved', tasks })], s);
    expect(s.plan.phase).toBe('executing');
    expect(nextTask(s.plan).next?.id).toBe('t1');
    s = fold(
      [ev('task.started', { planId: 'plan_a', taskId: 't1', title: 'do t1', index: 1, total: 3, attempt: 1 })],
      s,
    );
    expect(currentTask(s.plan)).toMatchObject({ task: { id: 't1' }, index: 1, total: 3 });
    s = fold(
      [ev('task.completed', { planId: 'plan_a', taskId: 't1', title: 'do t1', index: 1, total: 3, result: 'r' })],
      s,
    );
    expect(s.plan.current).toBeUndefined();
    expect(s.plan.status).toEqual({ t1: 'completed', t2: 'pending', t3: 'pending' });
    expect(nextTask(s.plan).next?.id).toBe('t2');
    s = fold(
      [ev('task.failed', { planId: 'plan_a', taskId: 't2', title: 'do t2', index: 2, total: 3, error: 'x' })],
      s,
    );
    // t3 depends on the failed t2: nothing can run, t3 is skipped with it.
    expect(nextTask(s.plan)).toEqual({ blocked: ['t3'] });
    s = fold(
      [ev('plan.completed', { planId: 'plan_a', completed: ['t1'], failed: ['t2'], skipped: ['t3'], summary: '' })],
      s,
    );
    expect(s.plan.phase).toBe('done');
  });

  it('a rejection or a question goes back to planning; a new plan during execution goes back to the gate', () => {
    seq = 0;
    let s = fold([created('plan_a'), ev('plan.gate', { planId: 'plan_a', status: 'clarification', reason: '?' })]);
    expect(s.plan.phase).toBe('planning');
    s = fold([created('plan_b', 2), ev('plan.gate', { planId: 'plan_b', status: 'approved', tasks })], s);
    s = fold(
      [ev('task.started', { planId: 'plan_b', taskId: 't1', title: 'do t1', index: 1, total: 3, attempt: 1 })],
      s,
    );
    s = fold([created('plan_c', 3)], s);
    expect(s.plan).toMatchObject({ phase: 'gate', version: 3, planId: 'plan_c', current: undefined, status: {} });
    // Events of an older plan change nothing.
    s = fold(
      [ev('task.completed', { planId: 'plan_b', taskId: 't1', title: 'do t1', index: 1, total: 3, result: 'r' })],
      s,
    );
    expect(s.plan.status).toEqual({});
  });

  it('approver changes: the modified tasks run in their new order; skipped ones and their dependents do not', () => {
    seq = 0;
    const free = [task('t1'), task('t2'), task('t3', ['t1'])];
    const s = fold([
      ev('plan.created', { planId: 'p', callId: 'c', version: 1, tasks: free, dependencies: [] }),
      ev('plan.gate', {
        planId: 'p',
        status: 'modified',
        changes: { skip: ['t1'], order: ['t2', 't3'] },
        tasks: [free[1], free[2]],
      }),
    ]);
    expect(s.plan.tasks.map((t) => t.id)).toEqual(['t2', 't3']);
    expect(s.plan.skippedByGate).toEqual(['t1']);
    expect(nextTask(s.plan)).toEqual({ next: free[1], blocked: ['t3'] });
  });

  it('a person skipping a task in an escalation skips it; a retry is a new attempt', () => {
    seq = 0;
    let s = fold([created('p'), ev('plan.gate', { planId: 'p', status: 'approved', tasks })]);
    s = fold([ev('task.started', { planId: 'p', taskId: 't1', title: 'do t1', index: 1, total: 3, attempt: 1 })], s);
    s = fold([ev('task.started', { planId: 'p', taskId: 't1', title: 'do t1', index: 1, total: 3, attempt: 2 })], s);
    expect(s.plan.attempts.t1).toBe(2);
    s = fold(
      [
        ev('recovery.escalated', {
          planId: 'p',
          taskId: 't1',
          class: 'unknown',
          reason: 'r',
          status: 'decided',
          decision: 'skip',
        }),
      ],
      s,
    );
    expect(s.plan.status.t1).toBe('skipped');
    expect(nextTask(s.plan).next).toBeUndefined();
  });
});
