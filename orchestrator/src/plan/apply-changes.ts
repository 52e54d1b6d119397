import type { ChangedPlan, PlanChanges, PlanTask } from './plan-types';

/** STAND-IN (plan-driver branch) until plan-logic's apply-changes.ts lands: on merge, take plan-logic's. */
export function applyPlanChanges(tasks: readonly PlanTask[], changes: PlanChanges): ChangedPlan {
  const skipped = changes.skip ?? [];
  let kept = tasks.filter((t) => !skipped.includes(t.id));
  if (changes.order) {
    const order = changes.order;
    kept = [...kept].sort((a, b) => rank(order, a.id) - rank(order, b.id));
  }
  kept = kept.map((t) => (changes.edit?.[t.id] ? { ...t, title: changes.edit[t.id]! } : t));
  for (const [i, t] of kept.entries())
    for (const d of t.dependsOn)
      if (kept.findIndex((k) => k.id === d) > i)
        return { ok: false, problem: `${t.id} depends on ${d}, ordered after it` };
  return { ok: true, tasks: kept, skipped };
}

function rank(order: readonly string[], id: string): number {
  const i = order.indexOf(id);
  return i < 0 ? order.length : i;
}
