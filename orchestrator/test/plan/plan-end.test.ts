import { describe, expect, it } from 'vitest';
import { planSummary, planTally } from '../../src/plan/plan-end';
import { initialPlanState, type PlanState } from '../../src/plan/plan-state';

const task = (id: string, dependsOn: string[] = []) => ({ id, title: `Create ${id}.txt with its letter`, dependsOn });

/** ta failed and a person chose abort; tb depends on it, tc does not: neither ran. */
function aborted(): PlanState {
  return {
    ...initialPlanState(),
    planMode: true,
    phase: 'executing',
    planId: 'plan_1',
    tasks: [task('ta'), task('tb', ['ta']), task('tc')],
    status: { ta: 'failed', tb: 'pending', tc: 'pending' },
  };
}

describe('planTally and planSummary', () => {
  it('an aborted plan counts every task it never got to as skipped, the failed task as failed', () => {
    expect(planTally(aborted(), true)).toEqual({ completed: [], failed: ['ta'], skipped: ['tb', 'tc'] });
    expect(planSummary(aborted(), true)).toBe('0/3 tasks completed. 1 failure (ta). Skipped: tb, tc. Aborted.');
  });

  it('a plan that goes on only skips what depends on a failed task', () => {
    expect(planTally(aborted())).toEqual({ completed: [], failed: ['ta'], skipped: ['tb'] });
  });
});
