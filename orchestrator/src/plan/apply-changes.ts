import { PlanChanges } from '@gatehouse/shared';
import { orderViolations } from './plan-order';
import type { ChangedPlan, PlanTask } from './plan-types';
import { MAX_TASKS } from './validate-plan';
import { vagueTitleProblem } from './vague-title';

/**
 * An approver's changes applied to a validated plan, and checked again: what is approved is what
 * runs, so a change that would make the plan unrunnable is refused, naming the task, and nothing
 * of it is applied. Changes are applied as skip, then edit, then order.
 *
 * Skipping a task that others depend on is refused unless they are skipped too: running a task
 * whose prerequisite never ran would execute something the approver did not see in that form, and
 * silently skipping the dependants would drop work the approver did not name. The approver lists
 * both, or neither. `order`, when given, lists every remaining task exactly once (a reorder, never
 * a way to drop or add a task) and must keep each task after the tasks it depends on.
 */
export function applyPlanChanges(tasks: PlanTask[], changes: PlanChanges): ChangedPlan {
  const known = new Set(tasks.map((t) => t.id));
  const unknown = (id: string): ChangedPlan =>
    refuse(`there is no task ${JSON.stringify(id)} in the plan (its tasks: ${[...known].join(', ')})`);
  // The schema's record drops a `__proto__` key rather than refusing it: an edit nobody applies must not pass.
  const rawEdit: unknown = (changes as { edit?: unknown } | null)?.edit;
  if (typeof rawEdit === 'object' && rawEdit !== null)
    for (const id of Object.keys(rawEdit)) if (!known.has(id)) return unknown(id);
  const parsed = PlanChanges.safeParse(changes);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') || 'the changes';
    return refuse(`${where}: ${issue?.message ?? 'not valid'} (changes are skip, order and edit)`);
  }
  const c = parsed.data;
  if (tasks.length > MAX_TASKS) return refuse(`the plan has ${tasks.length} tasks; a plan has at most ${MAX_TASKS}`);

  const skip = new Set<string>();
  for (const id of c.skip ?? []) {
    if (!known.has(id)) return unknown(id);
    skip.add(id);
  }
  for (const t of tasks) {
    if (skip.has(t.id)) continue;
    const dep = t.dependsOn.find((d) => skip.has(d));
    if (dep !== undefined)
      return refuse(`${t.id} depends on ${dep}, which would be skipped: skip ${t.id} too, or keep ${dep}`);
  }
  let remaining = tasks.filter((t) => !skip.has(t.id));
  if (remaining.length === 0) return refuse('every task would be skipped: keep at least one, or reject the plan');

  // Own keys only: an edit keyed `__proto__` or `constructor` is just an id that is not in the plan.
  const edits = Object.entries(c.edit ?? {});
  for (const [id, title] of edits) {
    if (!known.has(id)) return unknown(id);
    if (skip.has(id)) return refuse(`${id} is both skipped and edited: do one or the other`);
    const vague = vagueTitleProblem(title);
    if (vague) return refuse(`the new title of ${id}: ${vague}`);
  }
  const titles = new Map(edits);
  remaining = remaining.map((t) => (titles.has(t.id) ? { ...t, title: titles.get(t.id) as string } : t));

  if (c.order !== undefined) {
    const byId = new Map(remaining.map((t) => [t.id, t]));
    const seen = new Set<string>();
    for (const id of c.order) {
      if (!known.has(id)) return unknown(id);
      if (skip.has(id)) return refuse(`the new order lists ${id}, which is skipped: leave it out of the order`);
      if (seen.has(id)) return refuse(`the new order lists ${id} twice: list each task once`);
      seen.add(id);
    }
    const missing = remaining.filter((t) => !seen.has(t.id)).map((t) => t.id);
    if (missing.length > 0)
      return refuse(`the new order leaves out ${missing.join(', ')}: list every task that is not skipped (or skip it)`);
    remaining = c.order.map((id) => byId.get(id) as PlanTask);
  }
  const broken = orderViolations(remaining)[0];
  if (broken) return refuse(`${broken.task} depends on ${broken.dependsOn}, which the new order puts after it`);
  return { ok: true, tasks: remaining, skipped: tasks.filter((t) => skip.has(t.id)).map((t) => t.id) };
}

function refuse(problem: string): ChangedPlan {
  return { ok: false, problem };
}
