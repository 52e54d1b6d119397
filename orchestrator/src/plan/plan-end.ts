import type { LoopOutcome } from '../loop/loop';
import type { PlanDriverDeps } from './plan-driver-deps';
import { nextTask, type PlanState } from './plan-state';

/**
 * The plan's tally: completed, failed and skipped ids (skipped: by the approver, recovery, a dead
 * dependency, or, when the plan was aborted, every task it never got to).
 */
export function planTally(
  plan: PlanState,
  aborted = false,
): { completed: string[]; failed: string[]; skipped: string[] } {
  const blocked = new Set(nextTask(plan).blocked);
  if (aborted) for (const t of plan.tasks) if (plan.status[t.id] === 'pending') blocked.add(t.id);
  const completed = plan.tasks.filter((t) => plan.status[t.id] === 'completed').map((t) => t.id);
  const failed = plan.tasks.filter((t) => plan.status[t.id] === 'failed').map((t) => t.id);
  const skipped = [
    ...plan.skippedByGate,
    ...plan.tasks
      .filter((t) => plan.status[t.id] === 'skipped' || (blocked.has(t.id) && plan.status[t.id] !== 'failed'))
      .map((t) => t.id),
  ];
  return { completed, failed, skipped: [...new Set(skipped)] };
}

/** "3/3 tasks completed. 0 failures." — or which failed and which were skipped. */
export function planSummary(plan: PlanState, aborted = false): string {
  const { completed, failed, skipped } = planTally(plan, aborted);
  const total = plan.tasks.length + plan.skippedByGate.length;
  const parts = [
    `${completed.length}/${total} tasks completed.`,
    `${failed.length} failure${failed.length === 1 ? '' : 's'}${failed.length ? ` (${failed.join(', ')})` : ''}.`,
  ];
  if (skipped.length) parts.push(`Skipped: ${skipped.join(', ')}.`);
  if (aborted) parts.push('Aborted.');
  return parts.join(' ');
}

/** Ends the plan: `plan.completed`, and the run's outcome (final only when every task completed). */
export function completePlan(d: PlanDriverDeps, aborted = false): LoopOutcome {
  const plan = d.tracker.state.plan;
  if (plan.phase !== 'done' && plan.planId) {
    d.log.append('plan.completed', 'runtime', {
      planId: plan.planId,
      ...planTally(plan, aborted),
      summary: planSummary(plan, aborted),
      ...(aborted ? { aborted: true } : {}),
    });
  }
  return planOutcome(d);
}

/** The outcome of a plan that is done, as plan.completed recorded it. */
export function planOutcome(d: PlanDriverDeps): LoopOutcome {
  const last = [...d.log.events()].reverse().find((e) => e.type === 'plan.completed');
  if (last?.type !== 'plan.completed') return { status: 'failed', stopReason: 'plan_not_completed' };
  const p = last.data;
  const all = p.failed.length === 0 && p.skipped.length === 0 && !p.aborted && p.completed.length > 0;
  return all
    ? { status: 'final', stopReason: 'plan_completed', answer: p.summary, decidedBy: 'plan' }
    : {
        status: 'partial',
        stopReason: p.aborted ? 'plan_aborted' : 'plan_incomplete',
        answer: p.summary,
        decidedBy: 'plan',
      };
}
