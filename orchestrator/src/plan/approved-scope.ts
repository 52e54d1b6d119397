import type { EventEnvelope, PlanTask } from '@gatehouse/shared';
import { globPattern } from './task-scope';

/**
 * An approved plan is an approved scope, also where it matters most: writing back to the repository.
 * A command (bash, a build, a check) can change files its task's `paths` do not name; the gate cannot
 * see that before it runs, so the export refuses it after: a path that no task of any plan approved
 * in the run covers is never written back. A task without `paths` may change anything, and so may
 * its plan. A plan run in which no plan was approved may change nothing. Returns a path's problem.
 */
export function approvedScope(events: readonly EventEnvelope[]): ((path: string) => string | undefined) | undefined {
  const first = events[0];
  if (first?.type !== 'run.started' || first.data.planMode !== true) return undefined;
  const proposed = new Map<string, PlanTask[]>();
  const approved: PlanTask[] = [];
  for (const e of events) {
    if (e.type === 'plan.created') proposed.set(e.data.planId, e.data.tasks);
    if (e.type === 'plan.gate' && (e.data.status === 'approved' || e.data.status === 'modified'))
      approved.push(...(e.data.tasks ?? proposed.get(e.data.planId) ?? []));
  }
  if (approved.length === 0) return () => 'no plan was approved in this run, so nothing it changed is written back';
  if (approved.some((t) => t.paths === undefined)) return undefined;
  const globs = [...new Set(approved.flatMap((t) => t.paths ?? []))];
  const patterns = globs.map(globPattern);
  return (p) =>
    patterns.some((re) => re.test(p))
      ? undefined
      : `outside the approved plan's paths (${globs.join(', ')}); review the diff and apply it by hand if it is wanted`;
}
