import type { PlanCheck, PlanScope } from './plan-types';
import type { PlanTask } from './plan-types';

/**
 * STAND-IN (plan-driver branch) until plan-logic's validate-plan.ts lands: on merge, take plan-logic's.
 * Checks the count (3-7), unique ids, dependencies that exist, and tools within the run's own.
 */
export function validatePlan(input: unknown, scope: PlanScope): PlanCheck {
  const tasks = ((input as { tasks?: PlanTask[] }).tasks ?? []).map((t) => ({ ...t, dependsOn: t.dependsOn ?? [] }));
  const problems: string[] = [];
  if (tasks.length < 3 || tasks.length > 7) problems.push(`a plan has 3-7 tasks, not ${tasks.length}`);
  const ids = new Set(tasks.map((t) => t.id));
  if (ids.size !== tasks.length) problems.push('task ids must be unique');
  for (const t of tasks) {
    for (const d of t.dependsOn) if (!ids.has(d)) problems.push(`${t.id} depends on ${d}, which is not in the plan`);
    for (const tool of t.tools ?? [])
      if (!scope.tools.includes(tool)) problems.push(`${t.id} names tool ${tool}, which this run does not have`);
  }
  return problems.length ? { ok: false, problems } : { ok: true, tasks };
}
